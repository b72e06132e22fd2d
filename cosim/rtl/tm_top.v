// A small shared-buffer traffic manager under SIH admission, written to be checked
// against the mmu-sim model (cosim/rtl/README.md: interface, timing, model mapping).
//
// Phase table of one cycle c (every block reads the registers of the last edge):
//   1. tm_dt:        next T and T_lossy from the registered shared totals (Eq. 2).
//   2. tm_admission: decisions for the start-of-packet beats of cycle c (whole packet,
//                    shared-grant chain over the ports in order).
//   3. tm_ingress:   admitted cells take free pointers and are written; a last cell
//                    enqueues its packet.
//   4. tm_egress:    each port reads one cell (its next one, or the first of the packet
//                    its scheduler picks from the queues as they stood at the edge).
//   5. tm_pfc:       XOFF set by step 2; QOFF queues with no headroom and shared < X_on
//                    resume.
//   Edge: counters (charges, then releases), free list (pops, then pushes), RAMs, queue
//   registers, T, XOFF, the decision report and the egress outputs.
module tm_top #(
    parameter integer P = 4,
    parameter integer NPRIO = 4,
    parameter integer N_CELLS = 512,
    parameter integer CELL_BYTES = 64,
    parameter integer MAX_CELLS = 8,
    parameter [NPRIO-1:0] LOSSLESS_MASK = 4'b1100,
    parameter integer PHI = 4,
    parameter integer ETA = 24,
    parameter integer DELTA = 8,
    parameter integer ALPHA_LOG2 = -1,
    parameter integer LOSSY_CELLS = 96,
    parameter integer LOSSY_ALPHA_LOG2 = -1,
    parameter integer FLOW_W = 16,
    parameter integer SEQ_W = 16,
    parameter integer LEN_W = 10,
    parameter integer DATA_W = 32,
    // Derived widths: leave at their defaults.
    parameter integer PRW = $clog2(NPRIO),
    parameter integer PORTW = $clog2(P),
    parameter integer NCW = $clog2(MAX_CELLS + 1),
    parameter integer CW = $clog2(N_CELLS + 1)
) (
    input  wire                clk,
    input  wire                rst,
    output wire                ready,
    // Ingress cell beats, one per port per cycle, no backpressure.
    input  wire [P-1:0]        in_valid,
    input  wire [P-1:0]        in_sop,
    input  wire [P-1:0]        in_eop,
    input  wire [P*PRW-1:0]    in_prio,
    input  wire [P*PORTW-1:0]  in_dst,
    input  wire [P*FLOW_W-1:0] in_flow,
    input  wire [P*SEQ_W-1:0]  in_seq,
    input  wire [P*LEN_W-1:0]  in_len,
    input  wire [P*NCW-1:0]    in_ncells,
    input  wire [P*DATA_W-1:0] in_data,
    // Admission decision of the start of packet of the previous cycle, per ingress port.
    output wire [P-1:0]        rep_valid,
    output wire [P-1:0]        rep_drop,
    output wire [P-1:0]        rep_reason,
    output wire [P*NCW-1:0]    rep_private,
    output wire [P*NCW-1:0]    rep_shared,
    output wire [P*NCW-1:0]    rep_headroom,
    // Egress cell beats, one per port per cycle.
    output wire [P-1:0]        out_valid,
    output wire [P-1:0]        out_sop,
    output wire [P-1:0]        out_eop,
    output wire [P*PRW-1:0]    out_queue,
    output wire [P*PORTW-1:0]  out_src,
    output wire [P*FLOW_W-1:0] out_flow,
    output wire [P*SEQ_W-1:0]  out_seq,
    output wire [P*LEN_W-1:0]  out_len,
    output wire [P*NCW-1:0]    out_ncells,
    output wire [P*DATA_W-1:0] out_data,
    // XOFF per ingress queue (port * NPRIO + prio): PAUSE the upstream while high.
    output wire [P*NPRIO-1:0]  pfc_xoff,
    // Received pause per egress queue (port * NPRIO + prio): start no packet while high.
    input  wire [P*NPRIO-1:0]  pause_in,
    // Sticky errors: {queue underflow, ingress protocol, counter underflow, free list empty}.
    output wire [3:0]          err,
    // Status: the registers every decision of this cycle reads, and the drop counters.
    output wire [CW+2:0]       stat_t,
    output wire [CW+2:0]       stat_t_lossy,
    output wire [CW+2:0]       stat_x_on,
    output wire [CW-1:0]       stat_shared,
    output wire [CW-1:0]       stat_lossy_shared,
    output wire [CW-1:0]       stat_total,
    output wire [CW-1:0]       stat_free,
    output wire [P*NPRIO*CW-1:0] stat_grp_private,
    output wire [P*NPRIO*CW-1:0] stat_grp_shared,
    output wire [P*NPRIO*CW-1:0] stat_grp_headroom,
    output wire [P*32-1:0]     stat_drop_pkts_headroom,
    output wire [P*32-1:0]     stat_drop_cells_headroom,
    output wire [P*32-1:0]     stat_drop_pkts_lossy,
    output wire [P*32-1:0]     stat_drop_cells_lossy
);
    localparam integer G = P * NPRIO;
    localparam integer PW = $clog2(N_CELLS);
    localparam integer QW = PORTW + PRW;
    localparam integer CELL_LOG2 = $clog2(CELL_BYTES);
    localparam integer DESC_W = NCW + LEN_W + SEQ_W + FLOW_W + PRW + PORTW;

    function integer popcount;
        input [NPRIO-1:0] mask;
        integer i;
        begin
            popcount = 0;
            for (i = 0; i < NPRIO; i = i + 1) popcount = popcount + (mask[i] ? 1 : 0);
        end
    endfunction

    // The buffer partition of hw-model/src/config.rs: the lossy pool, then per lossless
    // ingress queue phi private and eta headroom cells (Eq. 3); the rest is B_s.
    localparam integer N_LOSSLESS = popcount(LOSSLESS_MASK);
    localparam integer B_S = N_CELLS - LOSSY_CELLS - P * N_LOSSLESS * (PHI + ETA);
    localparam integer B_LS = LOSSY_CELLS;

    
    // Registered received pause: a change in cycle c acts on scheduling from c + 1.
    reg  [G-1:0]    paused;
    always @(posedge clk) begin
        if (rst) paused <= {G{1'b0}};
        else     paused <= pause_in;
    end

    tm_dt #(.CW(CW), .SEGMENT(B_S), .ALPHA_LOG2(ALPHA_LOG2)) u_dt (
        .clk(clk), .rst(rst), .occupancy(stat_shared), .t(stat_t));
    tm_dt #(.CW(CW), .SEGMENT(B_LS), .ALPHA_LOG2(LOSSY_ALPHA_LOG2)) u_dt_lossy (
        .clk(clk), .rst(rst), .occupancy(stat_lossy_shared), .t(stat_t_lossy));

    wire [P-1:0]     sop_ok;
    wire [P-1:0]     admit;
    wire [P-1:0]     drop;
    wire [P-1:0]     reason;
    wire [P*NCW-1:0] seg_private;
    wire [P*NCW-1:0] seg_shared;
    wire [P*NCW-1:0] seg_headroom;
    wire [G-1:0]     xoff_set;

    tm_admission #(
        .P(P), .NPRIO(NPRIO), .CW(CW), .NCW(NCW), .PRW(PRW),
        .LOSSLESS_MASK(LOSSLESS_MASK), .PHI(PHI), .ETA(ETA), .B_S(B_S), .B_LS(B_LS)
    ) u_adm (
        .sop(sop_ok), .prio(in_prio), .ncells(in_ncells),
        .grp_private(stat_grp_private), .grp_shared(stat_grp_shared),
        .grp_headroom(stat_grp_headroom),
        .t(stat_t), .t_lossy(stat_t_lossy),
        .shared_total(stat_shared), .lossy_shared_total(stat_lossy_shared),
        .admit(admit), .drop(drop), .reason(reason),
        .seg_private(seg_private), .seg_shared(seg_shared), .seg_headroom(seg_headroom),
        .xoff_set(xoff_set));

    wire [P-1:0]        pop_req;
    wire [P*PW-1:0]     pop_ptr;
    wire [P-1:0]        wr_valid;
    wire [P-1:0]        link_valid;
    wire [P*PW-1:0]     link_ptr;
    wire [P-1:0]        desc_we;
    wire [P*PW-1:0]     desc_waddr;
    wire [P*DESC_W-1:0] desc_wdata;
    wire [P-1:0]        enq_valid;
    wire [P*QW-1:0]     enq_queue;
    wire [P*PW-1:0]     enq_head;
    wire [P-1:0]        err_protocol;

    genvar gp;
    generate
        for (gp = 0; gp < P; gp = gp + 1) begin : g_in
            tm_ingress #(
                .PORT(gp), .P(P), .PW(PW), .NCW(NCW), .PRW(PRW), .PORTW(PORTW), .QW(QW),
                .FLOW_W(FLOW_W), .SEQ_W(SEQ_W), .LEN_W(LEN_W), .CELL_LOG2(CELL_LOG2),
                .MAX_CELLS(MAX_CELLS), .DESC_W(DESC_W)
            ) u_in (
                .clk(clk), .rst(rst), .ready(ready),
                .in_valid(in_valid[gp]), .in_sop(in_sop[gp]), .in_eop(in_eop[gp]),
                .in_prio(in_prio[gp*PRW +: PRW]), .in_dst(in_dst[gp*PORTW +: PORTW]),
                .in_flow(in_flow[gp*FLOW_W +: FLOW_W]), .in_seq(in_seq[gp*SEQ_W +: SEQ_W]),
                .in_len(in_len[gp*LEN_W +: LEN_W]), .in_ncells(in_ncells[gp*NCW +: NCW]),
                .sop_ok(sop_ok[gp]), .admit(admit[gp]), .drop(drop[gp]), .reason(reason[gp]),
                .seg_private(seg_private[gp*NCW +: NCW]),
                .seg_shared(seg_shared[gp*NCW +: NCW]),
                .seg_headroom(seg_headroom[gp*NCW +: NCW]),
                .pop_req(pop_req[gp]), .pop_ptr(pop_ptr[gp*PW +: PW]),
                .wr_valid(wr_valid[gp]), .link_valid(link_valid[gp]),
                .link_ptr(link_ptr[gp*PW +: PW]),
                .desc_we(desc_we[gp]), .desc_waddr(desc_waddr[gp*PW +: PW]),
                .desc_wdata(desc_wdata[gp*DESC_W +: DESC_W]),
                .enq_valid(enq_valid[gp]), .enq_queue(enq_queue[gp*QW +: QW]),
                .enq_head(enq_head[gp*PW +: PW]),
                .rep_valid(rep_valid[gp]), .rep_drop(rep_drop[gp]),
                .rep_reason(rep_reason[gp]),
                .rep_private(rep_private[gp*NCW +: NCW]),
                .rep_shared(rep_shared[gp*NCW +: NCW]),
                .rep_headroom(rep_headroom[gp*NCW +: NCW]),
                .drop_pkts_headroom(stat_drop_pkts_headroom[gp*32 +: 32]),
                .drop_pkts_lossy(stat_drop_pkts_lossy[gp*32 +: 32]),
                .drop_cells_headroom(stat_drop_cells_headroom[gp*32 +: 32]),
                .drop_cells_lossy(stat_drop_cells_lossy[gp*32 +: 32]),
                .err_protocol(err_protocol[gp]));
        end
    endgenerate

    wire [P-1:0]        rd_valid;
    wire [P*PW-1:0]     rd_ptr;
    wire [P*DATA_W-1:0] rd_data;
    wire [P*PW-1:0]     rd_next;
    wire [P*PORTW-1:0]  rel_src;
    wire [P*PRW-1:0]    rel_prio;
    wire                err_free_empty;

    tm_free_list #(.P(P), .N(N_CELLS), .PW(PW), .CW(CW)) u_free (
        .clk(clk), .rst(rst), .ready(ready),
        .pop_req(pop_req), .pop_ptr(pop_ptr),
        .push_valid(rd_valid), .push_ptr(rd_ptr),
        .count(stat_free), .err_empty(err_free_empty));

    tm_cell_buffer #(.P(P), .N(N_CELLS), .PW(PW), .DATA_W(DATA_W)) u_buf (
        .clk(clk),
        .wr_valid(wr_valid), .wr_ptr(pop_ptr), .wr_data(in_data),
        .link_valid(link_valid), .link_ptr(link_ptr), .link_next(pop_ptr),
        .rd_ptr(rd_ptr), .rd_data(rd_data), .rd_next(rd_next));

    wire [G-1:0]     deq;
    wire [G*PW-1:0]  q_head;
    wire [G-1:0]     q_nonempty;
    wire [P*PW-1:0]  desc_raddr;
    wire [P*DESC_W-1:0] desc_rdata;
    wire             err_q_underflow;

    tm_queues #(
        .P(P), .NPRIO(NPRIO), .N(N_CELLS), .PW(PW), .CW(CW), .QW(QW), .DESC_W(DESC_W)
    ) u_queues (
        .clk(clk), .rst(rst),
        .desc_we(desc_we), .desc_waddr(desc_waddr), .desc_wdata(desc_wdata),
        .enq_valid(enq_valid), .enq_queue(enq_queue), .enq_head(enq_head),
        .deq(deq), .q_head(q_head), .q_nonempty(q_nonempty),
        .desc_raddr(desc_raddr), .desc_rdata(desc_rdata),
        .err_underflow(err_q_underflow));

    generate
        for (gp = 0; gp < P; gp = gp + 1) begin : g_out
            tm_egress #(
                .NPRIO(NPRIO), .PW(PW), .NCW(NCW), .PRW(PRW), .PORTW(PORTW),
                .FLOW_W(FLOW_W), .SEQ_W(SEQ_W), .LEN_W(LEN_W), .DATA_W(DATA_W),
                .DESC_W(DESC_W)
            ) u_out (
                .clk(clk), .rst(rst),
                .q_nonempty(q_nonempty[gp*NPRIO +: NPRIO]),
                .q_head(q_head[gp*NPRIO*PW +: NPRIO*PW]),
                .paused(paused[gp*NPRIO +: NPRIO]),
                .deq(deq[gp*NPRIO +: NPRIO]),
                .desc_raddr(desc_raddr[gp*PW +: PW]),
                .desc_rdata(desc_rdata[gp*DESC_W +: DESC_W]),
                .rd_ptr(rd_ptr[gp*PW +: PW]), .rd_data(rd_data[gp*DATA_W +: DATA_W]),
                .rd_next(rd_next[gp*PW +: PW]),
                .rd_valid(rd_valid[gp]),
                .rel_src(rel_src[gp*PORTW +: PORTW]), .rel_prio(rel_prio[gp*PRW +: PRW]),
                .out_valid(out_valid[gp]), .out_sop(out_sop[gp]), .out_eop(out_eop[gp]),
                .out_queue(out_queue[gp*PRW +: PRW]), .out_src(out_src[gp*PORTW +: PORTW]),
                .out_flow(out_flow[gp*FLOW_W +: FLOW_W]), .out_seq(out_seq[gp*SEQ_W +: SEQ_W]),
                .out_len(out_len[gp*LEN_W +: LEN_W]), .out_ncells(out_ncells[gp*NCW +: NCW]),
                .out_data(out_data[gp*DATA_W +: DATA_W]));
        end
    endgenerate

    wire err_acct_underflow;

    tm_accounting #(
        .P(P), .NPRIO(NPRIO), .CW(CW), .NCW(NCW), .PRW(PRW), .PORTW(PORTW),
        .LOSSLESS_MASK(LOSSLESS_MASK)
    ) u_acct (
        .clk(clk), .rst(rst),
        .chg_valid(sop_ok & admit), .chg_prio(in_prio),
        .chg_private(seg_private), .chg_shared(seg_shared), .chg_headroom(seg_headroom),
        .rel_valid(rd_valid), .rel_src(rel_src), .rel_prio(rel_prio),
        .grp_private(stat_grp_private), .grp_shared(stat_grp_shared),
        .grp_headroom(stat_grp_headroom),
        .shared_total(stat_shared), .lossy_shared_total(stat_lossy_shared),
        .total(stat_total), .err_underflow(err_acct_underflow));

    tm_pfc #(.G(G), .CW(CW), .DELTA(DELTA)) u_pfc (
        .clk(clk), .rst(rst), .xoff_set(xoff_set),
        .grp_shared(stat_grp_shared), .grp_headroom(stat_grp_headroom), .t(stat_t),
        .xoff(pfc_xoff), .x_on(stat_x_on));

    assign err = {err_q_underflow, |err_protocol, err_acct_underflow, err_free_empty};
endmodule
