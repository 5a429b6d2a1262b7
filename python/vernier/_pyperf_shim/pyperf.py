"""``import pyperf`` in a process that a pyperf script run by ``python -m vernier pyperf``
started through ``multiprocessing`` with the ``spawn`` or ``forkserver`` method: such a child
imports the script again, with its parent's ``sys.path``, on which this directory stands
before the real pyperf. It gets the same stand-in as its parent."""

import sys

from vernier import _pyperf

sys.modules[__name__] = _pyperf
