// Occupancy counters, in cells, CW bits each (hw-model/src/accounting.rs).
//
// Per ingress queue (port, prio): water levels private, shared and headroom (a lossy
// queue uses only shared). Totals: lossless shared (the S of Eq. 2), lossy shared, and all
// cells charged and not yet released.
//
// An admitted packet is charged whole at its start of packet: its private, shared and
// headroom cells as the admission decided. A cell read out at egress releases one cell of
// its ingress queue, drained headroom first, then shared, then private. Both apply at the
// clock edge, charges before releases (several egress ports may release cells of one
// ingress queue in the same cycle): with k releases,
//   dh = min(k, headroom'), ds = min(k - dh, shared'), dp = k - dh - ds
// where x' is x plus this cycle's charge.
module tm_accounting #(
    parameter integer P = 4,
    parameter integer NPRIO = 4,
    parameter integer CW = 10,
    parameter integer NCW = 4,
    parameter integer PRW = 2,
    parameter integer PORTW = 2,
    parameter [NPRIO-1:0] LOSSLESS_MASK = 4'b1100
) (
    input  wire                   clk,
    input  wire                   rst,
    // Charges: one admitted start of packet per ingress port.
    input  wire [P-1:0]           chg_valid,
    input  wire [P*PRW-1:0]       chg_prio,
    input  wire [P*NCW-1:0]       chg_private,
    input  wire [P*NCW-1:0]       chg_shared,
    input  wire [P*NCW-1:0]       chg_headroom,
    // Releases: one cell read per egress port.
    input  wire [P-1:0]           rel_valid,
    input  wire [P*PORTW-1:0]     rel_src,
    input  wire [P*PRW-1:0]       rel_prio,
    output reg  [P*NPRIO*CW-1:0]  grp_private,
    output reg  [P*NPRIO*CW-1:0]  grp_shared,
    output reg  [P*NPRIO*CW-1:0]  grp_headroom,
    output reg  [CW-1:0]          shared_total,
    output reg  [CW-1:0]          lossy_shared_total,
    output reg  [CW-1:0]          total,
    output reg                    err_underflow
);
    localparam integer G = P * NPRIO;
    localparam integer KW = $clog2(P + 1);

    function [CW-1:0] min2;
        input [CW-1:0] a;
        input [CW-1:0] b;
        begin
            min2 = a < b ? a : b;
        end
    endfunction

    reg [G*CW-1:0] private_next;
    reg [G*CW-1:0] shared_next;
    reg [G*CW-1:0] headroom_next;
    reg [CW-1:0]   shared_total_next;
    reg [CW-1:0]   lossy_shared_total_next;
    reg [CW-1:0]   total_next;
    reg            underflow;

    integer g;
    integer e;
    integer p;
    reg [PRW-1:0] q;
    reg [KW-1:0]  k;
    reg [CW-1:0]  c_private;
    reg [CW-1:0]  c_shared;
    reg [CW-1:0]  c_headroom;
    reg [CW-1:0]  lv_private;
    reg [CW-1:0]  lv_shared;
    reg [CW-1:0]  lv_headroom;
    reg [CW-1:0]  rest;
    reg [CW-1:0]  d_headroom;
    reg [CW-1:0]  d_shared;
    reg [CW-1:0]  d_private;

    always @* begin
        private_next = grp_private;
        shared_next = grp_shared;
        headroom_next = grp_headroom;
        shared_total_next = shared_total;
        lossy_shared_total_next = lossy_shared_total;
        total_next = total;
        underflow = 1'b0;
        p = 0;
        q = {PRW{1'b0}};
        k = {KW{1'b0}};
        c_private = {CW{1'b0}};
        c_shared = {CW{1'b0}};
        c_headroom = {CW{1'b0}};
        lv_private = {CW{1'b0}};
        lv_shared = {CW{1'b0}};
        lv_headroom = {CW{1'b0}};
        rest = {CW{1'b0}};
        d_headroom = {CW{1'b0}};
        d_shared = {CW{1'b0}};
        d_private = {CW{1'b0}};
        for (g = 0; g < G; g = g + 1) begin
            p = g / NPRIO;
            q = g[PRW-1:0];
            c_private = {CW{1'b0}};
            c_shared = {CW{1'b0}};
            c_headroom = {CW{1'b0}};
            if (chg_valid[p] && chg_prio[p*PRW +: PRW] == q) begin
                c_private = {{(CW-NCW){1'b0}}, chg_private[p*NCW +: NCW]};
                c_shared = {{(CW-NCW){1'b0}}, chg_shared[p*NCW +: NCW]};
                c_headroom = {{(CW-NCW){1'b0}}, chg_headroom[p*NCW +: NCW]};
            end
            k = {KW{1'b0}};
            for (e = 0; e < P; e = e + 1)
                if (rel_valid[e] && rel_src[e*PORTW +: PORTW] == p[PORTW-1:0]
                        && rel_prio[e*PRW +: PRW] == q)
                    k = k + {{(KW-1){1'b0}}, 1'b1};
            lv_private = grp_private[g*CW +: CW] + c_private;
            lv_shared = grp_shared[g*CW +: CW] + c_shared;
            lv_headroom = grp_headroom[g*CW +: CW] + c_headroom;
            d_headroom = min2({{(CW-KW){1'b0}}, k}, lv_headroom);
            rest = {{(CW-KW){1'b0}}, k} - d_headroom;
            d_shared = min2(rest, lv_shared);
            d_private = rest - d_shared;
            if (d_private > lv_private) underflow = 1'b1;
            private_next[g*CW +: CW] = lv_private - d_private;
            shared_next[g*CW +: CW] = lv_shared - d_shared;
            headroom_next[g*CW +: CW] = lv_headroom - d_headroom;
            if (LOSSLESS_MASK[q])
                shared_total_next = shared_total_next + c_shared - d_shared;
            else
                lossy_shared_total_next = lossy_shared_total_next + c_shared - d_shared;
            total_next = total_next + c_private + c_shared + c_headroom
                         - {{(CW-KW){1'b0}}, k};
        end
    end

    // Waveform probes: the three water levels of each ingress queue (port * NPRIO + prio).
    genvar gq;
    generate
        for (gq = 0; gq < G; gq = gq + 1) begin : g_q
            /* verilator lint_off UNUSEDSIGNAL */
            wire [CW-1:0] private_cells = grp_private[gq*CW +: CW];
            wire [CW-1:0] shared_cells = grp_shared[gq*CW +: CW];
            wire [CW-1:0] headroom_cells = grp_headroom[gq*CW +: CW];
            /* verilator lint_on UNUSEDSIGNAL */
        end
    endgenerate

    always @(posedge clk) begin
        if (rst) begin
            grp_private <= {G*CW{1'b0}};
            grp_shared <= {G*CW{1'b0}};
            grp_headroom <= {G*CW{1'b0}};
            shared_total <= {CW{1'b0}};
            lossy_shared_total <= {CW{1'b0}};
            total <= {CW{1'b0}};
            err_underflow <= 1'b0;
        end else begin
            grp_private <= private_next;
            grp_shared <= shared_next;
            grp_headroom <= headroom_next;
            shared_total <= shared_total_next;
            lossy_shared_total <= lossy_shared_total_next;
            total <= total_next;
            if (underflow) err_underflow <= 1'b1;
        end
    end
endmodule
