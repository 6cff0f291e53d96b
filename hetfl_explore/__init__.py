"""hetfl_explore: an interactive, literate lab for heterogeneity in federated learning.

The few names a first-time user needs are here; everything else lives in its part (see the architecture page).
"""
__version__ = "0.1.0"

# The parts of the package, lowest first. A part imports only from parts on earlier entries; parts that share an
# entry do not import each other (checked by tests/test_layers.py; explained on the contributing page).
LAYERS = ('foundation', 'engine', 'selection', 'feddiverse modelhet crowd clustering', 'fairness scale', 'widgets',
          'graders')

from .foundation.data import federation
from .foundation.hetero import dht, fl_metrics, client_types
from .engine.protocol import UniformSelector
from .engine.config import RunConfig
from .engine.simulation import run_fl
from .feddiverse.selector import FedDiverseSelector
from .feddiverse.simulation import simulate_selection
from .foundation.hetero import interaction_matrix
from .feddiverse.own_data import matrices_from_arrays, matrices_from_frame, load_client_csv
