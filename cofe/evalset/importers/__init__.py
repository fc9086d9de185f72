"""The old path of ``cofe.importers``, kept for code that imports from it.

The importers moved out of ``cofe.evalset`` (issue 41): they use the matcher's tokens to
derive keywords, and the matcher reads eval samples, so inside ``cofe.evalset`` they made a
cycle. Importing this module loads ``cofe.importers``, as importing it always loaded them.
"""

from cofe.importers import *  # noqa: F403  # every public name, listed once, there
from cofe.importers import __all__ as __all__
