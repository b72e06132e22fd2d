// Dynamic Threshold of one pool: T = alpha * (B_s - S), DSH Eq. 2, alpha = 2^ALPHA_LOG2.
//
// Built as DSH IV-D describes it: a saturating subtractor forms the free space of the
// shared segment from the registered occupancy S, a shifter multiplies it by alpha, and T
// is a register. T used in cycle c was computed in cycle c - 1 from S as it stood at the
// start of c - 1 (hw-model/src/dt_threshold.rs). T is CW + 3 bits wide, enough for the
// largest alpha (2^3) times the segment, so it never saturates.
module tm_dt #(
    parameter integer CW = 10,
    parameter integer SEGMENT = 192,
    parameter integer ALPHA_LOG2 = -1
) (
    input  wire            clk,
    input  wire            rst,
    input  wire [CW-1:0]   occupancy,
    output reg  [CW+2:0]   t
);
    localparam [CW-1:0] SEG = SEGMENT[CW-1:0];

    wire          borrow = occupancy > SEG;
    wire [CW-1:0] free_cells = borrow ? {CW{1'b0}} : SEG - occupancy;
    wire [CW+2:0] free_wide = {3'b000, free_cells};
    wire [CW+2:0] seg_wide = {3'b000, SEG};
    wire [CW+2:0] t_next;
    wire [CW+2:0] t_reset;

    generate
        if (ALPHA_LOG2 >= 0) begin : g_left
            assign t_next = free_wide << ALPHA_LOG2;
            assign t_reset = seg_wide << ALPHA_LOG2;
        end else begin : g_right
            assign t_next = free_wide >> (-ALPHA_LOG2);
            assign t_reset = seg_wide >> (-ALPHA_LOG2);
        end
    endgenerate

    // Reset value: alpha * B_s, the threshold of an empty buffer.
    always @(posedge clk) begin
        if (rst) t <= t_reset;
        else     t <= t_next;
    end
endmodule
