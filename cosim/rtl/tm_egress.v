// One egress port: a round-robin scheduler over its NPRIO queues and a transmitter that
// reads one cell per cycle (hw-model/src/egress_port.rs, with round robin in place of
// DWRR).
//
// In a cycle with no packet in progress, the scheduler picks the next non-empty queue
// that is not paused, after the one it served last, dequeues its head packet and reads its
// first cell in the same cycle. Then one cell per cycle until the last, with no gap and no
// stall; the next packet can start in the cycle after the last cell. A pause stops a queue
// from starting a packet, not the packet in progress.
//
// Reading a cell frees it: its pointer goes back to the free list and its ingress queue
// releases one cell (both at the edge). The cell read in cycle r is on the out_* outputs
// (registered) in cycle r + 1.
module tm_egress #(
    parameter integer NPRIO = 4,
    parameter integer PW = 9,
    parameter integer NCW = 4,
    parameter integer PRW = 2,
    parameter integer PORTW = 2,
    parameter integer FLOW_W = 16,
    parameter integer SEQ_W = 16,
    parameter integer LEN_W = 10,
    parameter integer DATA_W = 32,
    parameter integer DESC_W = 50
) (
    input  wire                clk,
    input  wire                rst,
    input  wire [NPRIO-1:0]    q_nonempty,
    input  wire [NPRIO*PW-1:0] q_head,
    input  wire [NPRIO-1:0]    paused,
    output reg  [NPRIO-1:0]    deq,
    output wire [PW-1:0]       desc_raddr,
    input  wire [DESC_W-1:0]   desc_rdata,
    output wire [PW-1:0]       rd_ptr,
    input  wire [DATA_W-1:0]   rd_data,
    input  wire [PW-1:0]       rd_next,
    // Free list push and accounting release of the cell read.
    output wire                rd_valid,
    output wire [PORTW-1:0]    rel_src,
    output wire [PRW-1:0]      rel_prio,
    output reg                 out_valid,
    output reg                 out_sop,
    output reg                 out_eop,
    output reg  [PRW-1:0]      out_queue,
    output reg  [PORTW-1:0]    out_src,
    output reg  [FLOW_W-1:0]   out_flow,
    output reg  [SEQ_W-1:0]    out_seq,
    output reg  [LEN_W-1:0]    out_len,
    output reg  [NCW-1:0]      out_ncells,
    output reg  [DATA_W-1:0]   out_data
);
    localparam [NCW-1:0] ONE = {{(NCW-1){1'b0}}, 1'b1};

    reg              busy;
    reg [PW-1:0]     cur_ptr;
    reg [NCW-1:0]    left;
    reg [DESC_W-1:0] cur_desc;
    reg [PRW-1:0]    last;

    wire [NPRIO-1:0] eligible = q_nonempty & ~paused;
    reg  [PRW-1:0]   pick;
    reg              found;
    integer i;

    // Round robin: the first eligible queue after the one served last.
    always @* begin
        pick = last;
        found = 1'b0;
        for (i = 1; i <= NPRIO; i = i + 1)
            if (!found && eligible[last + i[PRW-1:0]]) begin
                pick = last + i[PRW-1:0];
                found = 1'b1;
            end
    end

    wire start = !busy && found;
    assign rd_valid = busy || start;
    assign desc_raddr = q_head[pick*PW +: PW];
    assign rd_ptr = busy ? cur_ptr : desc_raddr;

    wire [DESC_W-1:0] desc = start ? desc_rdata : cur_desc;
    // Descriptor layout: {ncells, len, seq, flow, prio, src}, as tm_ingress writes it.
    wire [PORTW-1:0]  d_src = desc[0 +: PORTW];
    wire [PRW-1:0]    d_prio = desc[PORTW +: PRW];
    wire [FLOW_W-1:0] d_flow = desc[PORTW+PRW +: FLOW_W];
    wire [SEQ_W-1:0]  d_seq = desc[PORTW+PRW+FLOW_W +: SEQ_W];
    wire [LEN_W-1:0]  d_len = desc[PORTW+PRW+FLOW_W+SEQ_W +: LEN_W];
    wire [NCW-1:0]    d_ncells = desc[PORTW+PRW+FLOW_W+SEQ_W+LEN_W +: NCW];
    // Cells still to read, this one included.
    wire [NCW-1:0]    to_read = start ? d_ncells : left;

    assign rel_src = d_src;
    assign rel_prio = d_prio;

    always @* begin
        deq = {NPRIO{1'b0}};
        if (start) deq[pick] = 1'b1;
    end

    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
            cur_ptr <= {PW{1'b0}};
            left <= {NCW{1'b0}};
            cur_desc <= {DESC_W{1'b0}};
            last <= {PRW{1'b1}};
            out_valid <= 1'b0;
            out_sop <= 1'b0;
            out_eop <= 1'b0;
            out_queue <= {PRW{1'b0}};
            out_src <= {PORTW{1'b0}};
            out_flow <= {FLOW_W{1'b0}};
            out_seq <= {SEQ_W{1'b0}};
            out_len <= {LEN_W{1'b0}};
            out_ncells <= {NCW{1'b0}};
            out_data <= {DATA_W{1'b0}};
        end else begin
            out_valid <= rd_valid;
            out_sop <= start;
            out_eop <= rd_valid && to_read == ONE;
            if (rd_valid) begin
                out_queue <= d_prio;
                out_src <= d_src;
                out_flow <= d_flow;
                out_seq <= d_seq;
                out_len <= d_len;
                out_ncells <= d_ncells;
                out_data <= rd_data;
                cur_ptr <= rd_next;
                left <= to_read - ONE;
                busy <= to_read != ONE;
            end
            if (start) begin
                cur_desc <= desc_rdata;
                last <= pick;
            end
        end
    end
endmodule
