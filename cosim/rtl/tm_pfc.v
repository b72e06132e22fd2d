// Ingress PFC: the QON/QOFF state of every lossless ingress queue (DSH Fig. 3, SIH
// thresholds of DSH II-C; hw-model/src/pfc_fsm.rs).
//
// QON -> QOFF when the admission puts a packet of the queue into headroom or drops it
// (xoff_set). QOFF -> QON when the queue holds no headroom cells and its shared occupancy
// is below X_on = T - delta (one saturating subtractor, T being global), from the
// registered counters; never in a cycle that set XOFF. The state is the XOFF output
// itself: a MAC turns its edges into PAUSE and RESUME frames.
module tm_pfc #(
    parameter integer G = 16,
    parameter integer CW = 10,
    parameter integer DELTA = 8
) (
    input  wire            clk,
    input  wire            rst,
    input  wire [G-1:0]    xoff_set,
    input  wire [G*CW-1:0] grp_shared,
    input  wire [G*CW-1:0] grp_headroom,
    input  wire [CW+2:0]   t,
    output reg  [G-1:0]    xoff,
    output wire [CW+2:0]   x_on
);
    localparam [CW+2:0] DELTA_C = DELTA[CW+2:0];

    assign x_on = t > DELTA_C ? t - DELTA_C : {(CW+3){1'b0}};

    reg [G-1:0] resume;
    integer g;

    always @* begin
        resume = {G{1'b0}};
        for (g = 0; g < G; g = g + 1)
            resume[g] = xoff[g] && grp_headroom[g*CW +: CW] == {CW{1'b0}}
                        && {3'b000, grp_shared[g*CW +: CW]} < x_on;
    end

    always @(posedge clk) begin
        if (rst) xoff <= {G{1'b0}};
        else     xoff <= xoff_set | (xoff & ~resume);
    end
endmodule
