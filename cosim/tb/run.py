"""Build tm_top with Icarus Verilog and run the cocotb test on it.

    python tb/run.py [--bug N] [--seed S] [--cycles C] [--waves] [--partners-ignore-xoff]
                     [--expect-fail CHECK] [--no-stop]

The DUT's parameters come from the scenario file (--config, default cosim/dut.toml).
Exit code 0 when every check passed, 1 when a check failed, 2 for bad arguments or a
missing tool. With --expect-fail CHECK the exit code is 0 only if the run failed and CHECK
was the check that failed first (how the deliberate bugs are shown to be caught).
"""

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

COSIM = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(COSIM / "tb"))

import dut_config  # noqa: E402
import events  # noqa: E402
from partner import REACTION  # noqa: E402

# BUG=N builds the DUT with one deliberate bug (cosim/rtl/README.md, "Deliberate bugs").
BUGS = {
    "1": "BUG_THRESHOLD_OFF_BY_ONE",
    "2": "BUG_FREE_PTR_LOST",
    "3": "BUG_PAYLOAD_SWAP",
}

SOURCES = ["tm_dt.v", "tm_free_list.v", "tm_admission.v", "tm_accounting.v", "tm_pfc.v",
           "tm_cell_buffer.v", "tm_queues.v", "tm_ingress.v", "tm_egress.v", "tm_top.v"]


def die(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(COSIM / "dut.toml"))
    ap.add_argument("--bug", default="", help="deliberate bug: " + ", ".join(
        f"{k} = {v}" for k, v in BUGS.items()))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cycles", type=int, default=20000, help="cycles of traffic")
    ap.add_argument("--events", default=str(COSIM / "build" / "dut-events.jsonl"))
    ap.add_argument("--waves", action="store_true", help="dump an FST of the whole run")
    ap.add_argument("--partners-ignore-xoff", action="store_true",
                    help="the link partners never pause (shows the lossless-drop check bite)")
    ap.add_argument("--expect-fail", metavar="CHECK", default="",
                    help="succeed only if CHECK is the first check to fail")
    ap.add_argument("--no-stop", action="store_true",
                    help="a divergence of the live checker fails the test at the end of the "
                         "run instead of stopping it: the whole stream is written")
    args = ap.parse_args()

    if args.bug and args.bug not in BUGS:
        die(f"--bug {args.bug!r}: allowed: {', '.join(BUGS)} (or empty for no bug)")
    if args.cycles < 1:
        die(f"--cycles {args.cycles}: allowed: at least 1")
    if shutil.which("iverilog") is None or shutil.which("vvp") is None:
        die("iverilog not found: install Icarus Verilog (Debian: apt-get install iverilog)")
    try:
        from cocotb_tools.check_results import get_results
        from cocotb_tools.runner import get_runner
    except ImportError:
        die("cocotb not found: create the venv (python3 -m venv cosim/.venv && "
            "cosim/.venv/bin/pip install -r cosim/tb/requirements.txt)")
    try:
        cfg = dut_config.load(args.config)
        cfg.check_headroom(REACTION)
    except (OSError, dut_config.ConfigError) as e:
        die(f"{args.config}: {e}")

    bug = BUGS.get(args.bug)
    variant = bug.lower() if bug else "clean"
    build = COSIM / "build" / f"sim-{variant}"
    events_path = Path(args.events).resolve()
    events_path.parent.mkdir(parents=True, exist_ok=True)
    failures_path = build / "failures.json"

    runner = get_runner("icarus")
    runner.build(
        sources=[COSIM / "rtl" / s for s in SOURCES],
        hdl_toplevel="tm_top",
        parameters=cfg.rtl_parameters(),
        defines={bug: 1} if bug else {},
        build_dir=build,
        waves=args.waves,
        timescale=("1ns", "1ps"),
        always=True,
    )
    results = runner.test(
        test_module="test_tm",
        hdl_toplevel="tm_top",
        test_dir=build,
        waves=args.waves,
        extra_env={
            "COSIM_CONFIG": str(Path(args.config).resolve()),
            # The event file names the scenario relative to the repository, so that it
            # does not depend on where the checkout is.
            "COSIM_CONFIG_NAME": os.path.relpath(Path(args.config).resolve(), COSIM.parent),
            "COSIM_SEED": str(args.seed),
            "COSIM_CYCLES": str(args.cycles),
            "COSIM_EVENTS": str(events_path),
            "COSIM_BUG": bug or "",
            "COSIM_FAILURES": str(failures_path),
            "COSIM_IGNORE_XOFF": "1" if args.partners_ignore_xoff else "",
            "COSIM_NO_STOP": "1" if args.no_stop else "",
        },
    )
    tests, failed = get_results(Path(results))
    # The event file must follow the schema whatever the checks found.
    try:
        n = len(events.load(events_path))
    except (OSError, events.EventError) as e:
        print(f"error: event file: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"events: {n} in {events_path}")
    if args.waves:
        print(f"waves: {build / 'tm_top.fst'}")
    try:
        with open(failures_path, encoding="utf-8") as f:
            checks = json.load(f)
    except (OSError, json.JSONDecodeError):
        checks = []
    for c in checks:
        print(f"cosim: FAILED {c['check']} ({c['times']} times), first: {c['first'][0]}",
              file=sys.stderr)
    ok = tests > 0 and not failed
    if args.expect_fail:
        first = checks[0]["check"] if checks else None
        if not ok and first == args.expect_fail:
            what = bug or "the fault"
            print(f"cosim: {what} caught by the {first!r} check, as expected")
            return
        print(f"cosim: expected the {args.expect_fail!r} check to fail first, got "
              f"{first!r}", file=sys.stderr)
        sys.exit(1)
    if not ok:
        print(f"cosim: FAILED ({failed} of {tests} tests)", file=sys.stderr)
        sys.exit(1)
    print(f"cosim: {tests} passed, 0 failed")


if __name__ == "__main__":
    main()
