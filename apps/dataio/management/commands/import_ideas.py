from apps.dataio.management.base import ImportCommand


class Command(ImportCommand):
    help = "Import ideas from a CSV or JSON Lines file (see docs/formats.md); all or nothing."
    kind = "ideas"
