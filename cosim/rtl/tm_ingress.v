// One ingress port: checks the cell-beat protocol, asks the admission for a decision at
// start of packet, and writes the cells of an admitted packet into the cell buffer
// (hw-model/src/ingress.rs).
//
// A packet is admitted or dropped whole at its first beat; the decision is kept for its
// other beats. Every cell of an admitted packet takes a pointer from the free list in the
// cycle it arrives and is written there; the cell link RAM chains it behind the previous
// cell; the descriptor is written at start of packet at the first cell's address; the
// last cell enqueues the packet on egress queue (dst, prio). The model's write FIFO is not
// needed: there are P write ports, one per port.
//
// A beat that breaks the protocol (a start inside a packet, a middle beat outside one, a
// wrong end, ncells != ceil(len / CELL_BYTES), dst out of range, a beat before `ready`)
// sets err_protocol and is ignored.
//
// The decision is reported one cycle later on rep_* (registered), with the segment
// counts; dropped packets and cells are counted per reason.
//
// BUG_PAYLOAD_SWAP (deliberate, BUG=3): when an admitted packet starts in the cycle after
// the last cell of an admitted packet of 3 or more cells, the two exchange that cell: the
// first packet's chain is relinked to the new packet's first cell, and the new packet
// starts (descriptor, head, link) at the first packet's last cell. Every descriptor, cell
// count and pointer stays right; only the payloads differ (each packet carries one cell of
// the other), which nothing but a payload check sees. (The relink lands before the first
// packet's transmitter reads the link: its last-but-one cell is read at the earliest two
// cycles after its last cell arrived, since it has 3 or more cells.)
module tm_ingress #(
    parameter integer PORT = 0,
    parameter integer P = 4,
    parameter integer PW = 9,
    parameter integer NCW = 4,
    parameter integer PRW = 2,
    parameter integer PORTW = 2,
    parameter integer QW = 4,
    parameter integer FLOW_W = 16,
    parameter integer SEQ_W = 16,
    parameter integer LEN_W = 10,
    parameter integer CELL_LOG2 = 6,
    parameter integer MAX_CELLS = 8,
    parameter integer DESC_W = 50
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              ready,
    input  wire              in_valid,
    input  wire              in_sop,
    input  wire              in_eop,
    input  wire [PRW-1:0]    in_prio,
    input  wire [PORTW-1:0]  in_dst,
    input  wire [FLOW_W-1:0] in_flow,
    input  wire [SEQ_W-1:0]  in_seq,
    input  wire [LEN_W-1:0]  in_len,
    input  wire [NCW-1:0]    in_ncells,
    // Admission (combinational, from sop_ok).
    output wire              sop_ok,
    input  wire              admit,
    input  wire              drop,
    input  wire              reason,
    input  wire [NCW-1:0]    seg_private,
    input  wire [NCW-1:0]    seg_shared,
    input  wire [NCW-1:0]    seg_headroom,
    // Free list.
    output wire              pop_req,
    input  wire [PW-1:0]     pop_ptr,
    // Cell buffer writes (the cell goes to pop_ptr).
    output wire              wr_valid,
    output wire              link_valid,
    output wire [PW-1:0]     link_ptr,
    // Descriptor write and enqueue.
    output wire              desc_we,
    output wire [PW-1:0]     desc_waddr,
    output wire [DESC_W-1:0] desc_wdata,
    output wire              enq_valid,
    output wire [QW-1:0]     enq_queue,
    output wire [PW-1:0]     enq_head,
    // Decision report, one cycle after the start of packet.
    output reg               rep_valid,
    output reg               rep_drop,
    output reg               rep_reason,
    output reg  [NCW-1:0]    rep_private,
    output reg  [NCW-1:0]    rep_shared,
    output reg  [NCW-1:0]    rep_headroom,
    output reg  [31:0]       drop_pkts_headroom,
    output reg  [31:0]       drop_pkts_lossy,
    output reg  [31:0]       drop_cells_headroom,
    output reg  [31:0]       drop_cells_lossy,
    output reg               err_protocol
);
    localparam [PORTW-1:0] SRC = PORT[PORTW-1:0];
    localparam [PORTW:0]   PORTS = P[PORTW:0];
    localparam [NCW-1:0]   MAX_C = MAX_CELLS[NCW-1:0];
    localparam [NCW-1:0]   ONE = {{(NCW-1){1'b0}}, 1'b1};

    reg             in_pkt;
    reg             keep;
    reg [PW-1:0]    head;
    reg [PW-1:0]    prev;
    reg [NCW-1:0]   idx;
    reg [NCW-1:0]   pkt_ncells;
    reg [QW-1:0]    pkt_queue;

    // ceil(len / 2^CELL_LOG2)
    localparam [LEN_W:0] CELL_MASK = {{(LEN_W+1-CELL_LOG2){1'b0}}, {CELL_LOG2{1'b1}}};
    wire [LEN_W:0]  len_cells = ({1'b0, in_len} + CELL_MASK) >> CELL_LOG2;
    wire hdr_ok = in_ncells != {NCW{1'b0}} && in_ncells <= MAX_C
                  && len_cells == {{(LEN_W+1-NCW){1'b0}}, in_ncells}
                  && {1'b0, in_dst} < PORTS;
    assign sop_ok = ready && in_valid && in_sop && !in_pkt && hdr_ok
                    && in_eop == (in_ncells == ONE);
    wire mid_ok = ready && in_valid && !in_sop && in_pkt
                  && in_eop == (idx + ONE == pkt_ncells);
    wire take = (sop_ok && admit) || (mid_ok && keep);

`ifdef BUG_PAYLOAD_SWAP
    // The last cell of the admitted packet of 3 or more cells that ended in the cycle
    // before, and the cell before it.
    reg          swap_ok;
    reg [PW-1:0] swap_tail;
    reg [PW-1:0] swap_link;
    wire swap = swap_ok && sop_ok && admit;
    wire [PW-1:0] sop_ptr = swap ? swap_tail : pop_ptr;
    always @(posedge clk) begin
        swap_ok <= !rst && mid_ok && keep && in_eop && pkt_ncells > ONE + ONE;
        swap_tail <= pop_ptr;
        swap_link <= prev;
    end
`else
    wire swap = 1'b0;
    wire [PW-1:0] swap_link = prev;
    wire [PW-1:0] sop_ptr = pop_ptr;
`endif

    assign pop_req = take;
    assign wr_valid = take;
    assign link_valid = (mid_ok && keep) || swap;
    assign link_ptr = swap ? swap_link : prev;
    assign desc_we = sop_ok && admit;
    assign desc_waddr = sop_ptr;
    assign desc_wdata = {in_ncells, in_len, in_seq, in_flow, in_prio, SRC};
    assign enq_valid = take && in_eop;
    assign enq_queue = in_sop ? {in_dst, in_prio} : pkt_queue;
    assign enq_head = in_sop ? sop_ptr : head;

    wire [31:0] ncells_32 = {{(32-NCW){1'b0}}, in_ncells};

    always @(posedge clk) begin
        if (rst) begin
            in_pkt <= 1'b0;
            keep <= 1'b0;
            head <= {PW{1'b0}};
            prev <= {PW{1'b0}};
            idx <= {NCW{1'b0}};
            pkt_ncells <= {NCW{1'b0}};
            pkt_queue <= {QW{1'b0}};
            rep_valid <= 1'b0;
            rep_drop <= 1'b0;
            rep_reason <= 1'b0;
            rep_private <= {NCW{1'b0}};
            rep_shared <= {NCW{1'b0}};
            rep_headroom <= {NCW{1'b0}};
            drop_pkts_headroom <= 32'd0;
            drop_pkts_lossy <= 32'd0;
            drop_cells_headroom <= 32'd0;
            drop_cells_lossy <= 32'd0;
            err_protocol <= 1'b0;
        end else begin
            rep_valid <= sop_ok;
            rep_drop <= drop;
            rep_reason <= reason;
            rep_private <= seg_private;
            rep_shared <= seg_shared;
            rep_headroom <= seg_headroom;
            if (sop_ok) begin
                in_pkt <= !in_eop;
                keep <= admit;
                head <= sop_ptr;
                prev <= sop_ptr;
                idx <= ONE;
                pkt_ncells <= in_ncells;
                pkt_queue <= {in_dst, in_prio};
                if (drop && !reason) begin
                    drop_pkts_headroom <= drop_pkts_headroom + 32'd1;
                    drop_cells_headroom <= drop_cells_headroom + ncells_32;
                end
                if (drop && reason) begin
                    drop_pkts_lossy <= drop_pkts_lossy + 32'd1;
                    drop_cells_lossy <= drop_cells_lossy + ncells_32;
                end
            end else if (mid_ok) begin
                idx <= idx + ONE;
                if (keep) prev <= pop_ptr;
                if (in_eop) in_pkt <= 1'b0;
            end
            if (in_valid && !sop_ok && !mid_ok) err_protocol <= 1'b1;
        end
    end
endmodule
