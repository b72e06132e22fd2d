// The shared cell buffer: the cell data RAM and the cell link RAM, both indexed by cell
// pointer. cell_next[c] is the next cell of the same packet (written when that next cell
// is written, walked by the egress transmitter).
//
// P write ports (one per ingress port) and P read ports (one per egress port), reads
// combinational: a flop array standing in for a multi-ported SRAM. Only DATA_W bits of
// each cell are stored (a tag the testbench derives from flow, sequence number and cell
// index), not its 64 bytes.
module tm_cell_buffer #(
    parameter integer P = 4,
    parameter integer N = 512,
    parameter integer PW = 9,
    parameter integer DATA_W = 32
) (
    input  wire                clk,
    input  wire [P-1:0]        wr_valid,
    input  wire [P*PW-1:0]     wr_ptr,
    input  wire [P*DATA_W-1:0] wr_data,
    input  wire [P-1:0]        link_valid,
    input  wire [P*PW-1:0]     link_ptr,
    input  wire [P*PW-1:0]     link_next,
    input  wire [P*PW-1:0]     rd_ptr,
    output wire [P*DATA_W-1:0] rd_data,
    output wire [P*PW-1:0]     rd_next
);
    reg [DATA_W-1:0] cell_data [0:N-1];
    reg [PW-1:0]     cell_next [0:N-1];
    integer i;

    always @(posedge clk) begin
        for (i = 0; i < P; i = i + 1) begin
            if (wr_valid[i]) cell_data[wr_ptr[i*PW +: PW]] <= wr_data[i*DATA_W +: DATA_W];
            if (link_valid[i]) cell_next[link_ptr[i*PW +: PW]] <= link_next[i*PW +: PW];
        end
    end

    genvar e;
    generate
        for (e = 0; e < P; e = e + 1) begin : g_rd
            assign rd_data[e*DATA_W +: DATA_W] = cell_data[rd_ptr[e*PW +: PW]];
            assign rd_next[e*PW +: PW] = cell_next[rd_ptr[e*PW +: PW]];
        end
    endgenerate
endmodule
