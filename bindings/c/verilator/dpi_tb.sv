// An example harness: cosim/rtl's tm_top under Verilator, its pins turned into the model
// checker's events by DPI-C calls (sv/mmu_model_pkg.sv) as the RTL runs, the verdict read
// back at the end (docs/cosim.md, "SystemVerilog DPI-C"). The monitors stamp events as
// cosim/tb/monitors.py does; the traffic is simpler than the cocotb mix: each ingress
// port starts a packet (64..512 B, priority 0..3, half of them to port 0) on a quarter of
// its idle cycles, and holds a lossless priority back REACTION cycles after its XOFF.
// Egress queue (0, 3) is paused by pause_in for PAUSE_CYCLES cycles.
// Plusargs: +scenario=PATH (the model's configuration of the DUT, cosim/dut.toml).
module dpi_tb (
    input  wire clk,
    input  wire rst,
    output reg  done,
    // 1: divergences found; 2: an event refused (main.cpp prints mmu_last_error).
    output reg  [1:0] failed
);
  import mmu_model_pkg::*;

  localparam int P = 4, NPRIO = 4, PRW = 2, PORTW = 2, FLOW_W = 16, SEQ_W = 16;
  localparam int LEN_W = 10, NCW = 4, DATA_W = 32, CELL_BYTES = 64;
  localparam int REACTION = 8;
  localparam longint TRAFFIC = 20000, DRAIN = 2000, PAUSE_FROM = 3000, PAUSE_CYCLES = 1000;

  wire                ready;
  // The ingress vectors: `in` during this cycle, `nx` the next (driven at the clock edge).
  typedef struct packed {
    logic [P-1:0]        valid, sop, eop;
    logic [P*PRW-1:0]    prio;
    logic [P*PORTW-1:0]  dst;
    logic [P*FLOW_W-1:0] flow;
    logic [P*SEQ_W-1:0]  seq;
    logic [P*LEN_W-1:0]  len;
    logic [P*NCW-1:0]    ncells;
  } beats_t;
  beats_t in, nx;
  reg  [P*NPRIO-1:0]  pause_in;
  wire [P-1:0]        rep_valid, rep_drop, rep_reason, out_valid, out_sop;
  wire [P*NCW-1:0]    rep_private, rep_shared, rep_headroom, out_ncells;
  wire [P*PRW-1:0]    out_queue;
  wire [P*PORTW-1:0]  out_src;
  wire [P*FLOW_W-1:0] out_flow;
  wire [P*SEQ_W-1:0]  out_seq;
  wire [P*NPRIO-1:0]  pfc_xoff;
  wire [3:0]          err;

  // The stat_* outputs are left open: the checker follows the events.
  /* verilator lint_off PINMISSING */
  tm_top dut (
      .clk(clk), .rst(rst), .ready(ready),
      .in_valid(in.valid), .in_sop(in.sop), .in_eop(in.eop), .in_prio(in.prio),
      .in_dst(in.dst), .in_flow(in.flow), .in_seq(in.seq), .in_len(in.len),
      .in_ncells(in.ncells), .in_data({P * DATA_W{1'b0}}),
      .rep_valid(rep_valid), .rep_drop(rep_drop), .rep_reason(rep_reason),
      .rep_private(rep_private), .rep_shared(rep_shared), .rep_headroom(rep_headroom),
      .out_valid(out_valid), .out_sop(out_sop), .out_eop(), .out_queue(out_queue),
      .out_src(out_src), .out_flow(out_flow), .out_seq(out_seq), .out_len(),
      .out_ncells(out_ncells), .out_data(), .pfc_xoff(pfc_xoff), .pause_in(pause_in),
      .err(err));
  /* verilator lint_on PINMISSING */

  chandle h;
  string scenario;
  longint cyc = -1;
  int unsigned events, rng = 32'h1234_5678;
  // The packet each port is sending: cells left, and its fields.
  int unsigned left[P], idx[P], prio[P], dst[P], bytes[P], ncells[P];
  int unsigned seq[P][NPRIO][P];
  // The flow and sequence number of each port's last start (its decision comes a cycle later).
  int unsigned start_flow[P], start_seq[P];
  reg [P*NPRIO-1:0] xoff_seen[REACTION];
  reg [P*NPRIO-1:0] last_xoff, last_pause;

  initial begin
    if (!$value$plusargs("scenario=%s", scenario)) scenario = "cosim/dut.toml";
    h = mmu_new(scenario, MMU_MODE_FOLLOW, MMU_LINE_RATE_CELL_PER_CYCLE, 64'd2);
    done = 0;
    failed = (h == null) ? 2'd2 : 2'd0;
  end

  function automatic int unsigned rand32();
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
  endfunction

  // An event call's result: the first SHOWN divergences printed as they come; a refusal
  // ends the run.
  localparam int SHOWN = 5;
  function automatic void took(int rc);
    events++;
    if (rc < 0) failed = 2'd2;
    for (int i = int'(mmu_errors(h)) - rc; rc > 0 && i < int'(mmu_errors(h)) && i < SHOWN; i++)
      $display("dpi: divergence at cycle %0d: %s", mmu_error_cycle(h, i), mmu_error_check(h, i));
  endfunction

  // The events of cycle c, from the pins as they stood during it (monitors.py's order:
  // the decisions and reads of c - 1 first, then c's starts and PFC edges).
  function automatic void monitor(longint c);
    for (int p = 0; p < P; p++) begin
      if (rep_valid[p] && rep_drop[p])
        took(mmu_drop(h, 64'(c - 1), 8'(p), start_flow[p], start_seq[p],
                      rep_reason[p] ? "lossy_threshold" : "headroom_full"));
      else if (rep_valid[p])
        took(mmu_admit(h, 64'(c - 1), 8'(p), start_flow[p], start_seq[p],
                       32'(rep_private[p*NCW+:NCW]), 32'(rep_shared[p*NCW+:NCW]),
                       32'(rep_headroom[p*NCW+:NCW])));
    end
    for (int p = 0; p < P; p++)
      if (out_valid[p] && out_sop[p])
        took(mmu_depart(h, 64'(c - 1), 8'(p), 8'(out_queue[p*PRW+:PRW]),
                        32'(out_flow[p*FLOW_W+:FLOW_W]), 32'(out_seq[p*SEQ_W+:SEQ_W]),
                        8'(out_src[p*PORTW+:PORTW]), 16'(out_ncells[p*NCW+:NCW])));
    for (int p = 0; p < P; p++)
      if (in.valid[p] && in.sop[p]) begin
        start_flow[p] = 32'(in.flow[p*FLOW_W+:FLOW_W]);
        start_seq[p] = 32'(in.seq[p*SEQ_W+:SEQ_W]);
        took(mmu_arrive(h, 64'(c), 8'(p), 8'(in.prio[p*PRW+:PRW]), start_flow[p],
                        start_seq[p], 32'(in.len[p*LEN_W+:LEN_W]),
                        8'(in.dst[p*PORTW+:PORTW]), 16'(in.ncells[p*NCW+:NCW])));
      end
    for (int q = 0; q < P * NPRIO; q++) begin
      if (pfc_xoff[q] != last_xoff[q])
        took(mmu_pfc(h, 64'(c), 8'(q / NPRIO), 8'(q % NPRIO), 8'(pfc_xoff[q]), 8'(MMU_PFC_SENT)));
      if (pause_in[q] != last_pause[q])
        took(mmu_pfc(h, 64'(c), 8'(q / NPRIO), 8'(q % NPRIO), 8'(pause_in[q]),
                     8'(MMU_PFC_RECEIVED)));
    end
    last_xoff = pfc_xoff;
    last_pause = pause_in;
  endfunction

  // The beat of port p in cycle c: the next cell of its packet, or a new packet.
  function automatic void drive(longint c, int p);
    int unsigned r;
    if (left[p] == 0 && c < TRAFFIC) begin
      r = rand32();
      if (r[1:0] == 0 && !xoff_seen[0][p*NPRIO+int'(r[3:2])]) begin
        prio[p] = 32'(r[3:2]);
        dst[p] = r[4] ? 0 : 32'(r[6:5]);
        bytes[p] = 64 + 32'(r[31:8]) % 449;
        ncells[p] = (bytes[p] + CELL_BYTES - 1) / CELL_BYTES;
        left[p] = ncells[p];
        idx[p] = 0;
      end
    end
    nx.valid[p] = left[p] != 0;
    if (left[p] == 0) return;
    nx.sop[p] = idx[p] == 0;
    nx.eop[p] = left[p] == 1;
    nx.prio[p*PRW+:PRW] = PRW'(prio[p]);
    nx.dst[p*PORTW+:PORTW] = PORTW'(dst[p]);
    nx.flow[p*FLOW_W+:FLOW_W] = FLOW_W'((p * NPRIO + prio[p]) * P + dst[p]);
    nx.seq[p*SEQ_W+:SEQ_W] = SEQ_W'(seq[p][prio[p]][dst[p]]);
    nx.len[p*LEN_W+:LEN_W] = LEN_W'(bytes[p]);
    nx.ncells[p*NCW+:NCW] = NCW'(ncells[p]);
    idx[p]++;
    left[p]--;
    if (left[p] == 0) seq[p][prio[p]][dst[p]]++;
  endfunction

  function automatic void finish(longint c);
    int rc = mmu_finish(h);
    int unsigned n;
    if (rc < 0) failed = 2'd2;
    n = mmu_errors(h);
    if (failed == 2'd2) $display("dpi: an event was refused");
    else if (n == 0) $display("dpi: %0d cycles, %0d events: consistent", c, events);
    else begin
      $display("dpi: %0d cycles, %0d events, %0d divergences; the first:\n%s", c, events, n,
               mmu_error_text(h, 0));
      failed = 2'd1;
    end
    done = 1;
  endfunction

  always @(posedge clk) begin
    if (rst || h == null || done || failed == 2'd2) begin
      in.valid <= 0;
      pause_in <= 0;
      last_xoff = 0;
      last_pause = 0;
      if (failed == 2'd2) done = 1;
    end else begin
      if (cyc >= 0) monitor(cyc);
      if (err != 0) $display("dpi: DUT error flags %b at cycle %0d", err, cyc);
      if (cyc >= TRAFFIC + DRAIN) finish(cyc);
      else if (cyc >= 0 || ready) begin
        cyc++;
        for (int i = 0; i < REACTION - 1; i++) xoff_seen[i] = xoff_seen[i+1];
        xoff_seen[REACTION-1] = pfc_xoff;
        for (int p = 0; p < P; p++) drive(cyc, p);
        in <= nx;
        pause_in[0*NPRIO+3] <= cyc >= PAUSE_FROM && cyc < PAUSE_FROM + PAUSE_CYCLES;
      end
    end
  end
endmodule
