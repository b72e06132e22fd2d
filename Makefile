# Two set-up commands on a fresh machine: `make run` and `make test` (see README.md).
CARGO ?= cargo
SIM := target/release/mmu-sim
WAVES := waveforms
# Soak: far more property-test cases and longer streams than `make test`.
SOAK_CASES ?= 2000
SOAK_CYCLES ?= 200000
# The property tests' seed in `make test`: fixed, so every run (CI's too) draws the same
# cases; `make test PROPTEST_SEED=random` draws new ones, as `make soak` always does.
PROPTEST_SEED ?= 20261129
PROPTEST_ENV := $(if $(filter random,$(PROPTEST_SEED)),,PROPTEST_RNG_SEED=$(PROPTEST_SEED))
# The core `make bench` pins its table to.
BENCH_CPU ?= 1
# The cargo profile of the C library `make dpi-check` links.
DPI_PROFILE ?= release
# `make mutants`: the model's core files (FILE=... for fewer), SHARD=k/N for one shard.
MUTANTS_FILES := hw-model/src/free_list.rs hw-model/src/accounting.rs hw-model/src/admission.rs \
	$(wildcard hw-model/src/policy/*.rs) hw-model/src/pfc/fsm.rs hw-model/src/pfc/state.rs hw-model/src/pfc/rx.rs \
	hw-model/src/sched/dwrr.rs hw-model/src/sched/hcf.rs hw-model/src/ecn_marker.rs \
	hw-model/src/ecm_cp.rs hw-model/src/queue_len.rs hw-model/src/int_stamp.rs crates/rtl/src/arith.rs
FILE ?= $(MUTANTS_FILES)
# Every test that exercises the core: the model's, the RTL units', the checker's, the testbench's.
MUTANTS_ALL_TESTS := --test-package hw-model --test-package rtl --test-package checker \
	--test-package scenario --test-package stimulus --test-package switch-run --test-package fabric \
	--test-package mmu-sim
# cargo-mutants 27.1.0 runs the baseline with the mutated packages' tests only, whatever the
# config's test_package says, and sets the timeouts from it: a first pass over rtl's files
# alone therefore tests them with rtl's tests (which catch every viable mutant of arith.rs),
# or its first mutant would build hw-model's tests inside a timeout set by rtl's build.
MUTANTS_FIRST_TESTS := $(if $(filter-out crates/rtl/%,$(FILE)),,--test-package rtl)
# The second pass's baseline is the same (the mutated packages' tests), so its timeouts
# are given: the survivors' first build compiles every test package (minutes), and the
# testbench's tests take a minute or more on a shared machine.
MUTANTS_ALL_TIMEOUTS := --build-timeout 1200 --timeout 600

.PHONY: run test sweep-slurm soak bench mutants waves waves-dsh waves-hcf waves-ecm waves-ecn waves-dcqcn waves-hpcc waves-powertcp cosim cosim-bugs cosim-check python-check python-wheel c-header dpi-check docs readme-help lint fmt clean

## run: the default scenario (fan-in burst on the tomahawk profile); summary + VCD + .gtkw
run:
	$(CARGO) build --release -p mmu-sim
	@mkdir -p $(WAVES)
	$(SIM) run --vcd $(WAVES)/default.vcd --summary-json $(WAVES)/default-summary.json

## test: every unit, integration, property (fixed seed: PROPTEST_SEED) and doc test (the criterion bench is built by
## `make bench` and checked by `make lint`), then the Slurm sweep step of `sweep-slurm` with
## the mmu-sim the tests built (target/debug, test profile: no release build), through
## .ci/optional: skipped with a loud NOT RUN line where its tools or root are missing; then
## the RTL co-simulation checked by the model (cosim unit + check: clean passes, BUG=1, 2 and
## 3 fail with the divergence named), the DPI-C harness under Verilator (dpi-check), the
## Python package (python-check) and the fabric over MPI (.ci/mpi-check: mmu-sim built with
## `--features mpi`, `mpirun -np 2 --mpi` byte for byte against `--threads 2`), each also
## through .ci/optional
test:
	$(PROPTEST_ENV) $(CARGO) test --workspace --exclude mmu-bench-criterion
	.ci/optional sweep-slurm --needs "munged slurmctld slurmd sbatch parallel" --root \
		--how "as root: apt-get install -y slurmctld slurmd slurm-client munge parallel (.ci/run does), then make sweep-slurm" \
		-- .ci/sweep-slurm target/debug/mmu-sim sweeps/ci.toml
	.ci/optional cosim --needs "iverilog python3" \
		--how "apt-get install -y iverilog (.ci/run does), then make cosim-check" \
		-- $(MAKE) --no-print-directory -C cosim venv unit check SIM=../target/debug/mmu-sim
	.ci/optional dpi-check --needs "verilator" \
		--how "apt-get install -y verilator (.ci/run does), then make dpi-check" \
		-- $(MAKE) --no-print-directory dpi-check DPI_PROFILE=test
	.ci/optional python --needs "python3" \
		--how "install CPython 3 with venv and pip, then make python-check" \
		-- $(MAKE) --no-print-directory python-check
	.ci/optional mpi --needs "mpirun mpicc" \
		--how "as root: apt-get install -y libopenmpi-dev openmpi-bin libclang-dev (.ci/run does), then .ci/mpi-check" \
		-- .ci/mpi-check

## sweep-slurm: sweeps/ci.toml three ways, locally (--jobs 2), as 4 GNU parallel shards and as
## a job array on a one-node Slurm cluster started by .ci/slurm-up; the three merged tables
## must be byte-identical (needs root and Debian's slurmctld slurmd slurm-client munge parallel)
sweep-slurm:
	$(CARGO) build --release -p mmu-sim
	.ci/sweep-slurm $(SIM) sweeps/ci.toml

## soak: the property tests with PROPTEST_CASES=$(SOAK_CASES) and $(SOAK_CYCLES)-cycle streams,
## and the lossless grid: every built-in with expect_lossless x SIH/DSH/L2BM x alpha 2^-7..2^3
## for ten times its cycles
soak:
	PROPTEST_CASES=$(SOAK_CASES) SOAK_CYCLES=$(SOAK_CYCLES) $(CARGO) test --release -p switch-run -p mmu-sim -p hw-model --test it -- --nocapture properties:: reference_model:: hcf:: ecm:: lossless:: --skip reproduce::

## bench: the speed table (the built-ins and the cycle loop, CPU time on core $(BENCH_CPU),
## without waves and with every signal in a VCD), then criterion's benchmark of the cycle
## loop (tomahawk, high load). NS3_LEAFSPINE=WORK (the folder of the ns-3 anchor's
## `leafspine.sh build`): ns-3 on its 256-server leaf-spine alternates with
## leafspine-256-websearch, and the ratio per round is printed (docs/performance.md)
bench:
	$(CARGO) build --release -p mmu-bench --bin bench
	$(CARGO) build --release -p mmu-sim
	taskset -c $(BENCH_CPU) target/release/bench $(if $(NS3_LEAFSPINE),--ns3-leafspine $(NS3_LEAFSPINE))
	$(CARGO) bench -p mmu-bench-criterion --bench cycle_loop

## mutants: cargo-mutants over the model's core files (settings in .cargo/mutants.toml,
## results in mutants.out/, docs/testing.md). Every mutant against the model's and the RTL
## units' tests, then the survivors alone (--iterate) against the checker's and the
## testbench's as well; exit 2 if a mutant survives both. FILE=hw-model/src/sched/hcf.rs: one
## file. SHARD=k/N (0 <= k < N): shard k of N in one pass with every test (a cluster's array job; results
## in mutants-shard-k/mutants.out/). Installs cargo-mutants from crates.io when missing.
## Not part of `make test`
mutants:
	$(CARGO) mutants --version >/dev/null 2>&1 || $(CARGO) install --locked cargo-mutants
ifdef SHARD
	$(CARGO) mutants $(addprefix --file ,$(FILE)) $(MUTANTS_ALL_TESTS) $(MUTANTS_ALL_TIMEOUTS) --shard $(SHARD) \
		--output mutants-shard-$(firstword $(subst /, ,$(SHARD)))
else
	rc=0; $(CARGO) mutants $(addprefix --file ,$(FILE)) $(MUTANTS_FIRST_TESTS) || rc=$$?; \
		test $$rc = 0 -o $$rc = 2 -o $$rc = 3
	$(CARGO) mutants $(addprefix --file ,$(FILE)) $(MUTANTS_ALL_TESTS) $(MUTANTS_ALL_TIMEOUTS) --iterate
endif

## waves: run the default scenario and open its waveform in GTKWave
waves: run
	gtkwave $(WAVES)/default.gtkw

# open_view SCENARIO,NAME: run SCENARIO with every signal in waveforms/NAME.vcd and open it
# in GTKWave on the committed view waveforms/NAME-view.gtkw
define open_view
$(CARGO) build --release -p mmu-sim
$(SIM) run $(1) --vcd $(WAVES)/$(2).vcd
gtkwave $(WAVES)/$(2)-view.gtkw
endef

## waves-dsh: the dsh-port-level scenario, opened on the committed DSH view (a view finds
## its dump beside itself, so `gtkwave waveforms/dsh-view.gtkw` works from any directory)
waves-dsh:
	$(call open_view,dsh-port-level,dsh)

## waves-hcf: the hcf-tcp scenario, opened on the committed HCF view
waves-hcf:
	$(call open_view,hcf-tcp,hcf)

## waves-ecm: the ecm-fanin scenario, opened on the committed ECM view (congestion point and
## reaction-point limiters)
waves-ecm:
	$(call open_view,ecm-fanin,ecm)

## waves-ecn: the ecn-dctcp scenario, opened on the committed ECN view (port 7's marker
## under three DCTCP senders)
waves-ecn:
	$(call open_view,ecn-dctcp,ecn)

## waves-dcqcn: the dcqcn-fanin scenario, opened on the committed DCQCN view (port 7's marker
## under three DCQCN flows, and the sources' buffered cells)
waves-dcqcn:
	$(call open_view,dcqcn-fanin,dcqcn)

## waves-hpcc: the hpcc-fanin scenario, opened on the committed INT view (port 7's queue and
## INT registers under three HPCC flows)
waves-hpcc:
	$(call open_view,hpcc-fanin,hpcc)

## waves-powertcp: the powertcp-fanin scenario, opened on the same view under PowerTCP
waves-powertcp:
	$(call open_view,powertcp-fanin,powertcp)

## cosim: the RTL traffic manager of cosim/rtl under cocotb and Icarus Verilog (cosim/README.md):
## 20000 cycles of traffic, the testbench's checks, events in cosim/build/dut-events.jsonl,
## then the model's checker on them (`mmu-sim check`, docs/cosim.md).
## BUG=1 (DT compare off by one), BUG=2 (free-list pointers lost) or BUG=3 (payloads of
## back-to-back packets swapped) builds a broken DUT.
cosim:
	$(CARGO) build --release -p mmu-sim
	$(MAKE) -C cosim run BUG=$(BUG)

## cosim-check: `make cosim` passes, and `make cosim BUG=1`, `BUG=2` and `BUG=3` fail with
## the divergence the model's checker must name first ("admission", "leaked cells",
## "payload"); BUG=3's stream without its CRCs passes
cosim-check:
	$(CARGO) build --release -p mmu-sim
	$(MAKE) -C cosim check

## cosim-bugs: each deliberate bug of the RTL is caught, by the check meant to catch it, and
## the event schema refuses malformed events
cosim-bugs:
	$(MAKE) -C cosim unit bugs

## python-wheel: the wheel of mmu_model in target/wheels, built by maturin (from PyPI, into
## target/python-build-venv) with cargo's build directory target/python: nothing is written
## into the source tree; then `pip install target/wheels/mmu_model-*.whl`
python-wheel:
	python3 -m venv target/python-build-venv
	target/python-build-venv/bin/pip install --quiet 'maturin>=1.5,<2'
	CARGO_TARGET_DIR=$(CURDIR)/target/python target/python-build-venv/bin/maturin build \
		--release --manifest-path bindings/python/Cargo.toml --out target/wheels

## python-check: the Python package mmu_model (bindings/python, PyO3) installed by pip into a
## fresh virtual environment (maturin builds it; pip fetches maturin from PyPI), and its tests
python-check:
	rm -rf target/python-venv
	python3 -m venv target/python-venv
	CARGO_TARGET_DIR=$(CURDIR)/target/python target/python-venv/bin/pip install ./bindings/python
	target/python-venv/bin/python -m unittest discover -s bindings/python/tests -v

## c-header: regenerate bindings/c/include/mmu_model.h (the C ABI of the checker, for
## SystemVerilog DPI-C) from bindings/c/src/lib.rs with cbindgen (`cargo install cbindgen`);
## C_HEADER_FLAGS=--verify fails instead if the committed header is not current
c-header:
	cd bindings/c && cbindgen --config cbindgen.toml --crate mmu-model-c --output include/mmu_model.h $(C_HEADER_FLAGS)

## dpi-check: cosim/rtl's tm_top under Verilator calling the model's checker through DPI-C
## (bindings/c/verilator): the clean RTL is consistent, BUG=1 is caught ("admission") and
## BUG=3 ("payload");
## needs `apt-get install -y verilator` (5.x). DPI_PROFILE=test: the library of `make test`'s
## profile (target/debug), no release build
dpi-check:
	$(CARGO) build --profile $(DPI_PROFILE) -p mmu-model-c
	bindings/c/verilator/dpi-check target/$(if $(filter release,$(DPI_PROFILE)),release,debug)/libmmu_model.a

## docs: API documentation of every crate
docs:
	$(CARGO) doc --workspace --no-deps

## readme-help: write mmu-sim's --help into the README's help blocks (`<!-- help: ARGS -->`);
## `make test` fails when they differ
readme-help:
	UPDATE_README=1 $(CARGO) test -p mmu-sim --test it -- help_blocks::readme_help_blocks_are_the_binarys_help

## lint: formatting and clippy, as the project requires them
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
	rm -f $(WAVES)/*.vcd $(WAVES)/*.fst $(WAVES)/*-summary.json
