"""Records: schemas (Avro and Arrow views), readers and writers, and RecordPath."""
