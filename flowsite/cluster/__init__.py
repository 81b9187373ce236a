"""The control plane's side of the cluster: nodes, federated status, commands and deployments."""
