// Egress queues as linked lists of packets (hw-model/src/packet_queue.rs), one queue per
// (egress port, priority), queue index dst * NPRIO + prio.
//
// A packet is known by its first cell. The descriptor RAM desc[head cell] holds its
// header (written at start of packet by the ingress); the packet link RAM
// pkt_next[head cell] chains the packets of a queue. A queue's registers are head, tail
// and packet count.
//
// Per cycle: at most one dequeue per queue (its egress port) and one enqueue per ingress
// port (the end of a packet), possibly several into one queue. A dequeue is applied
// first, then the enqueues in port order, each linking behind the previous tail; a queue
// emptied by the dequeue takes the first enqueued packet as its head. Changes are visible
// from the next cycle.
module tm_queues #(
    parameter integer P = 4,
    parameter integer NPRIO = 4,
    parameter integer N = 512,
    parameter integer PW = 9,
    parameter integer CW = 10,
    parameter integer QW = 4,
    parameter integer DESC_W = 50
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire [P-1:0]          desc_we,
    input  wire [P*PW-1:0]       desc_waddr,
    input  wire [P*DESC_W-1:0]   desc_wdata,
    input  wire [P-1:0]          enq_valid,
    input  wire [P*QW-1:0]       enq_queue,
    input  wire [P*PW-1:0]       enq_head,
    input  wire [P*NPRIO-1:0]    deq,
    output wire [P*NPRIO*PW-1:0] q_head,
    output wire [P*NPRIO-1:0]    q_nonempty,
    input  wire [P*PW-1:0]       desc_raddr,
    output wire [P*DESC_W-1:0]   desc_rdata,
    output reg                   err_underflow
);
    localparam integer Q = P * NPRIO;
    localparam [CW-1:0] ONE = {{(CW-1){1'b0}}, 1'b1};

    reg [DESC_W-1:0] desc [0:N-1];
    reg [PW-1:0]     pkt_next [0:N-1];
    reg [Q*PW-1:0]   head;
    reg [Q*PW-1:0]   tail;
    reg [Q*CW-1:0]   count;

    // pkt_next of each queue's head: its head after a dequeue.
    wire [Q*PW-1:0] after_head;

    reg [Q*PW-1:0] head_next;
    reg [Q*PW-1:0] tail_next;
    reg [Q*CW-1:0] count_next;
    reg [P-1:0]    link_we;
    reg [P*PW-1:0] link_addr;
    reg            underflow;
    reg [PW-1:0]   h;
    reg [PW-1:0]   t;
    reg [CW-1:0]   c;

    integer qi;
    integer p;

    always @* begin
        link_we = {P{1'b0}};
        link_addr = {P*PW{1'b0}};
        underflow = 1'b0;
        head_next = head;
        tail_next = tail;
        count_next = count;
        h = {PW{1'b0}};
        t = {PW{1'b0}};
        c = {CW{1'b0}};
        for (qi = 0; qi < Q; qi = qi + 1) begin
            h = head[qi*PW +: PW];
            t = tail[qi*PW +: PW];
            c = count[qi*CW +: CW];
            if (deq[qi]) begin
                if (c == {CW{1'b0}}) underflow = 1'b1;
                h = after_head[qi*PW +: PW];
                c = c - ONE;
            end
            for (p = 0; p < P; p = p + 1) begin
                if (enq_valid[p] && enq_queue[p*QW +: QW] == qi[QW-1:0]) begin
                    if (c == {CW{1'b0}}) begin
                        h = enq_head[p*PW +: PW];
                    end else begin
                        link_we[p] = 1'b1;
                        link_addr[p*PW +: PW] = t;
                    end
                    t = enq_head[p*PW +: PW];
                    c = c + ONE;
                end
            end
            head_next[qi*PW +: PW] = h;
            tail_next[qi*PW +: PW] = t;
            count_next[qi*CW +: CW] = c;
        end
    end

    always @(posedge clk) begin
        for (p = 0; p < P; p = p + 1) begin
            if (desc_we[p]) desc[desc_waddr[p*PW +: PW]] <= desc_wdata[p*DESC_W +: DESC_W];
            if (link_we[p]) pkt_next[link_addr[p*PW +: PW]] <= enq_head[p*PW +: PW];
        end
        if (rst) begin
            head <= {Q*PW{1'b0}};
            tail <= {Q*PW{1'b0}};
            count <= {Q*CW{1'b0}};
            err_underflow <= 1'b0;
        end else begin
            head <= head_next;
            tail <= tail_next;
            count <= count_next;
            if (underflow) err_underflow <= 1'b1;
        end
    end

    genvar gq;
    genvar ge;
    generate
        for (gq = 0; gq < Q; gq = gq + 1) begin : g_q
            // The queue's packet count, named for the waveform.
            wire [CW-1:0] packets = count[gq*CW +: CW];
            assign after_head[gq*PW +: PW] = pkt_next[head[gq*PW +: PW]];
            assign q_nonempty[gq] = packets != {CW{1'b0}};
        end
        for (ge = 0; ge < P; ge = ge + 1) begin : g_rd
            assign desc_rdata[ge*DESC_W +: DESC_W] = desc[desc_raddr[ge*PW +: PW]];
        end
    endgenerate

    assign q_head = head;
endmodule
