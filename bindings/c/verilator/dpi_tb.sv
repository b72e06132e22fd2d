// An example harness: cosim/rtl's tm_top under Verilator, its pins turned into the model
// checker's events by DPI-C calls (sv/mmu_model_pkg.sv) as the RTL runs, the verdict read
// back at the end (docs/cosim.md, "SystemVerilog DPI-C"). The monitors stamp events as
// cosim/tb/monitors.py does; the traffic is simpler than the cocotb mix: each ingress
// port starts a packet (64..512 B, priority 0..3, half of them to port 0) on a quarter of
// its idle cycles, and holds a lossless priority back REACTION cycles after its XOFF.
// Egress queue (0, 3) is paused by pause_in for PAUSE_CYCLES cycles. Each cell carries
// the tag cosim/tb/traffic.py's cell_tag gives it; `arrive` and `depart` carry the CRC-32
// of the payload driven and seen (docs/cosim.md, "Payload integrity"), so the monitors
// run LAG cycles behind the pins (kept in a ring) to have seen a packet's last cell.
// The DUT's parameters go to the checker first (mmu_meta); its warnings are printed.
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
  // The longest packet's cells: how far the monitors run behind the pins.
  localparam int MAX_CELLS = 8, RING = 2 * MAX_CELLS;
  localparam longint LAG = longint'(MAX_CELLS);

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
    logic [P*DATA_W-1:0] data;
  } beats_t;
  beats_t in, nx;
  reg  [P*NPRIO-1:0]  pause_in;
  wire [P-1:0]        rep_valid, rep_drop, rep_reason, out_valid, out_sop;
  wire [P*NCW-1:0]    rep_private, rep_shared, rep_headroom, out_ncells;
  wire [P*PRW-1:0]    out_queue;
  wire [P*PORTW-1:0]  out_src;
  wire [P*FLOW_W-1:0] out_flow;
  wire [P*SEQ_W-1:0]  out_seq;
  wire [P*DATA_W-1:0] out_data;
  wire [P*NPRIO-1:0]  pfc_xoff;
  wire [3:0]          err;

  // The pins the monitors read, as they stood during one cycle.
  typedef struct packed {
    beats_t              in;
    logic [P-1:0]        rep_valid, rep_drop, rep_reason, out_valid, out_sop;
    logic [P*NCW-1:0]    rep_private, rep_shared, rep_headroom, out_ncells;
    logic [P*PRW-1:0]    out_queue;
    logic [P*PORTW-1:0]  out_src;
    logic [P*FLOW_W-1:0] out_flow;
    logic [P*SEQ_W-1:0]  out_seq;
    logic [P*DATA_W-1:0] out_data;
    logic [P*NPRIO-1:0]  pfc_xoff, pause_in;
  } pins_t;
  pins_t ring[RING];

  // The stat_* outputs are left open: the checker follows the events.
  /* verilator lint_off PINMISSING */
  tm_top dut (
      .clk(clk), .rst(rst), .ready(ready),
      .in_valid(in.valid), .in_sop(in.sop), .in_eop(in.eop), .in_prio(in.prio),
      .in_dst(in.dst), .in_flow(in.flow), .in_seq(in.seq), .in_len(in.len),
      .in_ncells(in.ncells), .in_data(in.data),
      .rep_valid(rep_valid), .rep_drop(rep_drop), .rep_reason(rep_reason),
      .rep_private(rep_private), .rep_shared(rep_shared), .rep_headroom(rep_headroom),
      .out_valid(out_valid), .out_sop(out_sop), .out_eop(), .out_queue(out_queue),
      .out_src(out_src), .out_flow(out_flow), .out_seq(out_seq), .out_len(),
      .out_ncells(out_ncells), .out_data(out_data), .pfc_xoff(pfc_xoff), .pause_in(pause_in),
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
    // The CRC of cosim/tb/events_test.py's two words: the two monitors agree with zlib.
    if (crc32_word(crc32_word(0, 32'h1234_5678), 32'h9ABC_DEF0) != 32'h8682_9DEB)
      $fatal(1, "dpi: crc32_word is not zlib's CRC-32");
    if (h != null) begin
      if (mmu_meta(h, $sformatf("{\"P\":%0d,\"CELL_BYTES\":%0d}", P, CELL_BYTES)) < 0)
        failed = 2'd2;
      for (int unsigned i = 0; i < mmu_warnings(h); i++)
        $display("dpi: warning: %s", mmu_warning_text(h, i));
    end
  end

  // The ring's slot of cycle c.
  function automatic int slot(longint c);
    return int'(c % longint'(RING));
  endfunction

  // cosim/tb/traffic.py's cell_tag: flow (8 bits), seq (20 bits), cell index (4 bits).
  function automatic logic [DATA_W-1:0] cell_tag(int unsigned flow, int unsigned sq,
                                                  int unsigned i);
    return DATA_W'((flow & 32'hFF) << 24 | (sq & 32'hFFFFF) << 4 | (i & 32'hF));
  endfunction

  // CRC-32 (IEEE 802.3, reflected, zlib's crc32) of `crc` extended by `word`'s bytes,
  // least significant first: cosim/tb/events.py's payload_crc, one cell at a time.
  function automatic int unsigned crc32_word(int unsigned crc, logic [DATA_W-1:0] word);
    int unsigned c = ~crc;
    for (int b = 0; b < DATA_W / 8; b++) begin
      c ^= 32'(word[b*8+:8]);
      for (int k = 0; k < 8; k++) c = (c >> 1) ^ (32'hEDB8_8320 & {32{c[0]}});
    end
    return ~c;
  endfunction

  // The CRC of the packet starting on port p in cycle c: its cells' data, on the ingress
  // (`in`) or the egress (the output) pins of cycles c..c+n-1.
  function automatic int unsigned crc_in(longint c, int p, int unsigned n);
    int unsigned crc = 0;
    for (int unsigned k = 0; k < n; k++)
      crc = crc32_word(crc, ring[slot(c + longint'(k))].in.data[p*DATA_W+:DATA_W]);
    return crc;
  endfunction

  function automatic int unsigned crc_out(longint c, int p, int unsigned n);
    int unsigned crc = 0;
    for (int unsigned k = 0; k < n; k++)
      crc = crc32_word(crc, ring[slot(c + longint'(k))].out_data[p*DATA_W+:DATA_W]);
    return crc;
  endfunction

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
  // the decisions and reads of c - 1 first, then c's starts and PFC edges); the ring
  // holds the cycles up to c + LAG, so a packet starting in c has shown all its cells.
  function automatic void monitor(longint c);
    pins_t x = ring[slot(c)];
    for (int p = 0; p < P; p++) begin
      if (x.rep_valid[p] && x.rep_drop[p])
        took(mmu_drop(h, 64'(c - 1), 8'(p), start_flow[p], start_seq[p],
                      x.rep_reason[p] ? "lossy_threshold" : "headroom_full"));
      else if (x.rep_valid[p])
        took(mmu_admit(h, 64'(c - 1), 8'(p), start_flow[p], start_seq[p],
                       32'(x.rep_private[p*NCW+:NCW]), 32'(x.rep_shared[p*NCW+:NCW]),
                       32'(x.rep_headroom[p*NCW+:NCW])));
    end
    for (int p = 0; p < P; p++)
      if (x.out_valid[p] && x.out_sop[p])
        took(mmu_depart_crc(h, 64'(c - 1), 8'(p), 8'(x.out_queue[p*PRW+:PRW]),
                            32'(x.out_flow[p*FLOW_W+:FLOW_W]), 32'(x.out_seq[p*SEQ_W+:SEQ_W]),
                            8'(x.out_src[p*PORTW+:PORTW]), 16'(x.out_ncells[p*NCW+:NCW]),
                            crc_out(c, p, 32'(x.out_ncells[p*NCW+:NCW]))));
    for (int p = 0; p < P; p++)
      if (x.in.valid[p] && x.in.sop[p]) begin
        start_flow[p] = 32'(x.in.flow[p*FLOW_W+:FLOW_W]);
        start_seq[p] = 32'(x.in.seq[p*SEQ_W+:SEQ_W]);
        took(mmu_arrive_crc(h, 64'(c), 8'(p), 8'(x.in.prio[p*PRW+:PRW]), start_flow[p],
                            start_seq[p], 32'(x.in.len[p*LEN_W+:LEN_W]),
                            8'(x.in.dst[p*PORTW+:PORTW]), 16'(x.in.ncells[p*NCW+:NCW]),
                            crc_in(c, p, 32'(x.in.ncells[p*NCW+:NCW]))));
      end
    for (int q = 0; q < P * NPRIO; q++) begin
      if (x.pfc_xoff[q] != last_xoff[q])
        took(mmu_pfc(h, 64'(c), 8'(q / NPRIO), 8'(q % NPRIO), 8'(x.pfc_xoff[q]), 8'(MMU_PFC_SENT)));
      if (x.pause_in[q] != last_pause[q])
        took(mmu_pfc(h, 64'(c), 8'(q / NPRIO), 8'(q % NPRIO), 8'(x.pause_in[q]),
                     8'(MMU_PFC_RECEIVED)));
    end
    last_xoff = x.pfc_xoff;
    last_pause = x.pause_in;
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
    nx.data[p*DATA_W+:DATA_W] = cell_tag((p * NPRIO + prio[p]) * P + dst[p],
                                         seq[p][prio[p]][dst[p]], idx[p]);
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
      if (cyc >= 0) begin
        ring[slot(cyc)] = '{in, rep_valid, rep_drop, rep_reason, out_valid, out_sop,
                             rep_private, rep_shared, rep_headroom, out_ncells, out_queue,
                             out_src, out_flow, out_seq, out_data, pfc_xoff, pause_in};
        if (cyc >= LAG) monitor(cyc - LAG);
      end
      if (err != 0) $display("dpi: DUT error flags %b at cycle %0d", err, cyc);
      if (cyc >= TRAFFIC + DRAIN) begin
        // Drained: the last LAG cycles have no packet still arriving or leaving.
        for (longint c = cyc - LAG + 1; c <= cyc; c++) monitor(c);
        finish(cyc);
      end
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
