"""How a solve with loops converged: the passes of Newton's method it took, its residual and its fallbacks, as
every solver of loops (cyclic components, a race's state layers, and the faster implementations a backend
registers) counts them and a policy's record keeps them.

>>> found = Convergence()
>>> found.add(passes=3, residual=1e-15, fallbacks=0)
>>> found.components, found.most_passes
(1, 3)
"""

from __future__ import annotations

import json
from dataclasses import dataclass

RESIDUAL_TOLERANCE = 1e-12  # relative: |T(x) - x| at which a component is solved
MAX_PASSES = 60


@dataclass
class Convergence:
    """How the components were solved: what ``solve`` prints and the policy's record keeps."""

    method: str = "newton"
    components: int = 0
    passes: int = 0  # summed over the components: a pass of a window counts once for each component in it
    most_passes: int = 0
    residual: float = 0.0
    fallbacks: int = 0  # passes that took a value-iteration step (a singular Newton system)

    def add(self, passes: int, residual: float, fallbacks: int) -> None:
        """Count one cyclic component that took ``passes`` passes and ended at ``residual``."""
        self.components += 1
        self.passes += passes
        self.most_passes = max(self.most_passes, passes)
        self.residual = max(self.residual, residual)
        self.fallbacks += fallbacks

    def record(self) -> str:
        """Return the JSON text stored in ``policy.convergence``."""
        return json.dumps({"method": self.method, "cyclic_components": self.components, "passes": self.passes,
                           "most_passes": self.most_passes, "residual": self.residual,
                           "value_iteration_steps": self.fallbacks})
