// The free list of cell pointers: a FIFO of free cell addresses in its own RAM (the ring).
//
// Up to P pops (one per cell written) and P pushes (one per cell read out) per cycle.
// Pops take the pointers free at the start of the cycle, in port order among the ports
// that request one; pushes land at the clock edge, so a cell freed in cycle c can be
// reused in cycle c + 1 at the earliest (hw-model/src/free_list.rs). Pops read inside
// [head, head + count), pushes write behind it, so the two never touch the same entry.
//
// After reset an init engine writes the pointers 0..N-1 into the ring, P per cycle;
// `ready` rises when it is done and stays high.
module tm_free_list #(
    parameter integer P = 4,
    parameter integer N = 512,
    parameter integer PW = 9,
    parameter integer CW = 10
) (
    input  wire            clk,
    input  wire            rst,
    output reg             ready,
    input  wire [P-1:0]    pop_req,
    output wire [P*PW-1:0] pop_ptr,
    input  wire [P-1:0]    push_valid,
    input  wire [P*PW-1:0] push_ptr,
    output reg  [CW-1:0]   count,
    output reg             err_empty
);
    localparam integer NPW = $clog2(P + 1);
`ifdef BUG_FREE_PTR_LOST
    // Deliberate bug: the push counter is one bit short, so a cycle in which all P ports
    // free a cell counts zero pushes and the P pointers written to the ring are lost.
    localparam integer NPUSHW = $clog2(P);
`else
    localparam integer NPUSHW = NPW;
`endif
    localparam [CW:0] N_WIDE = N[CW:0];
    localparam [CW-1:0] P_CELLS = P[CW-1:0];

    reg [PW-1:0] ring [0:N-1];
    reg [PW-1:0] head;
    reg [PW-1:0] init_ptr;

    // a mod N for a < 2N.
    function [PW-1:0] wrap;
        input [CW:0] a;
        begin
            if (a >= N_WIDE) wrap = a[PW-1:0] - N_WIDE[PW-1:0];
            else             wrap = a[PW-1:0];
        end
    endfunction

    reg [NPW-1:0]    n_pop;
    reg [NPUSHW-1:0] n_push;
    reg [PW-1:0]     tail;
    reg [P*PW-1:0]   pop_addr;
    reg [P*PW-1:0]   push_addr;
    integer i;

    // The i-th pop of the cycle reads entry head + i, the i-th push writes tail + i.
    always @* begin
        n_pop = {NPW{1'b0}};
        pop_addr = {P*PW{1'b0}};
        for (i = 0; i < P; i = i + 1) begin
            pop_addr[i*PW +: PW] = wrap({1'b0, head} + {{(CW+1-NPW){1'b0}}, n_pop});
            n_pop = n_pop + {{(NPW-1){1'b0}}, pop_req[i]};
        end
        tail = wrap({1'b0, head} + {1'b0, count});
        n_push = {NPUSHW{1'b0}};
        push_addr = {P*PW{1'b0}};
        for (i = 0; i < P; i = i + 1) begin
            push_addr[i*PW +: PW] = wrap({1'b0, tail} + {{(CW+1-NPUSHW){1'b0}}, n_push});
            n_push = n_push + {{(NPUSHW-1){1'b0}}, push_valid[i]};
        end
    end

    genvar gi;
    generate
        for (gi = 0; gi < P; gi = gi + 1) begin : g_pop
            assign pop_ptr[gi*PW +: PW] = ring[pop_addr[gi*PW +: PW]];
        end
    endgenerate

    wire [CW-1:0] n_pop_cw = {{(CW-NPW){1'b0}}, n_pop};
    wire [CW-1:0] n_push_cw = {{(CW-NPUSHW){1'b0}}, n_push};

    always @(posedge clk) begin
        if (rst) begin
            ready <= 1'b0;
            head <= {PW{1'b0}};
            count <= {CW{1'b0}};
            init_ptr <= {PW{1'b0}};
            err_empty <= 1'b0;
        end else if (!ready) begin
            for (i = 0; i < P; i = i + 1)
                ring[init_ptr + i[PW-1:0]] <= init_ptr + i[PW-1:0];
            init_ptr <= init_ptr + P_CELLS[PW-1:0];
            count <= count + P_CELLS;
            if (count + P_CELLS == N_WIDE[CW-1:0]) ready <= 1'b1;
        end else begin
            for (i = 0; i < P; i = i + 1)
                if (push_valid[i]) ring[push_addr[i*PW +: PW]] <= push_ptr[i*PW +: PW];
            head <= wrap({1'b0, head} + {1'b0, n_pop_cw});
            count <= count - n_pop_cw + n_push_cw;
            if (n_pop_cw > count) err_empty <= 1'b1;
        end
    end
endmodule
