"""Portal pages."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse


@login_required
def home(request):
    """The landing page."""
    return HttpResponse("Flowsite")
