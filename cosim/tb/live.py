"""The model's checker fed live: each line the event writer writes also goes to an
`mmu_model.Checker` (docs/cosim.md, "Python: mmu_model"), configured as `mmu-sim check
dut.toml --line-rate cell-per-cycle` is. The writer writes a cycle MAX_CELLS cycles after
it was sampled (once its packets' payload CRCs are known), and the checker settles a cycle
when the first event of a later cycle arrives, so the test sees a divergence some cycles
after the cycle it names (BUG=1: cycle 1094 at cycle 1106; BUG=2: 100 at 110; BUG=3: 6 at
16), and stops there (unless --no-stop)."""

import mmu_model


class LiveCheck:
    def __init__(self, scenario):
        self._checker = mmu_model.Checker(scenario, line_rate="cell-per-cycle")
        # The first divergence (a dict: `cycle`, `check`, `text`, ...), or None.
        self.first = None

    def feed(self, line):
        self._keep(self._checker.feed(line))

    def finish(self):
        """The end of the stream: the checks of its last cycle and its end (leaks)."""
        self._keep(self._checker.finish())

    def _keep(self, found):
        if found and self.first is None:
            self.first = found[0]

    def message(self):
        """The first divergence as `mmu-sim check` prints it, marked as the live one."""
        return f"live checker: divergence at {self.first['text']}"
