// Admission at start of packet, for the whole packet, under SIH (DSH II-C;
// hw-model/src/admission.rs).
//
// For the ingress queue (port, prio) with water levels (private, shared, headroom) and a
// packet of n cells:
//   to_private = min(n, phi - private), m = n - to_private;          case 1
//   lossless: shared < T and shared_in_use + m <= B_s -> m to shared  case 2
//             headroom + m <= eta -> m to headroom, XOFF               case 3
//             otherwise drop (headroom_full), XOFF                     case 4
//   lossy:    shared < T_lossy and lossy_in_use + m <= B_ls -> shared
//             otherwise drop (lossy_threshold).
// Lossy queues have no private buffer (phi = 0) and no headroom.
//
// All ports decide in the same cycle from the same registered counters and T. The only
// same-cycle chain is the running sum of shared cells granted to lower-numbered ports
// (shared_in_use, lossy_in_use), which keeps a segment from being over-committed.
module tm_admission #(
    parameter integer P = 4,
    parameter integer NPRIO = 4,
    parameter integer CW = 10,
    parameter integer NCW = 4,
    parameter integer PRW = 2,
    parameter [NPRIO-1:0] LOSSLESS_MASK = 4'b1100,
    parameter integer PHI = 4,
    parameter integer ETA = 24,
    parameter integer B_S = 192,
    parameter integer B_LS = 96
) (
    input  wire [P-1:0]           sop,
    input  wire [P*PRW-1:0]       prio,
    input  wire [P*NCW-1:0]       ncells,
    input  wire [P*NPRIO*CW-1:0]  grp_private,
    input  wire [P*NPRIO*CW-1:0]  grp_shared,
    input  wire [P*NPRIO*CW-1:0]  grp_headroom,
    input  wire [CW+2:0]          t,
    input  wire [CW+2:0]          t_lossy,
    input  wire [CW-1:0]          shared_total,
    input  wire [CW-1:0]          lossy_shared_total,
    output reg  [P-1:0]           admit,
    output reg  [P-1:0]           drop,
    // 0: headroom_full, 1: lossy_threshold
    output reg  [P-1:0]           reason,
    output reg  [P*NCW-1:0]       seg_private,
    output reg  [P*NCW-1:0]       seg_shared,
    output reg  [P*NCW-1:0]       seg_headroom,
    output reg  [P*NPRIO-1:0]     xoff_set
);
    localparam [CW-1:0] PHI_C = PHI[CW-1:0];
    localparam [CW:0]   ETA_C = ETA[CW:0];
    localparam [CW:0]   B_S_C = B_S[CW:0];
    localparam [CW:0]   B_LS_C = B_LS[CW:0];

    // The DT compare of case 2: a queue may take shared cells while below T.
    function below_t;
        input [CW-1:0] shared;
        input [CW+2:0] thr;
        begin
`ifdef BUG_THRESHOLD_OFF_BY_ONE
            // Deliberate bug: admits one packet too many at shared == T.
            below_t = {3'b000, shared} <= thr;
`else
            below_t = {3'b000, shared} < thr;
`endif
        end
    endfunction

    integer p;
    integer g;
    reg [PRW-1:0] q;
    reg           lossless;
    reg [CW-1:0]  priv;
    reg [CW-1:0]  shared;
    reg [CW-1:0]  headroom;
    reg [CW-1:0]  n;
    reg [CW-1:0]  room;
    reg [CW-1:0]  to_private;
    reg [CW-1:0]  m;
    reg [CW:0]    shared_in_use;
    reg [CW:0]    lossy_in_use;

    always @* begin
        admit = {P{1'b0}};
        drop = {P{1'b0}};
        reason = {P{1'b0}};
        seg_private = {P*NCW{1'b0}};
        seg_shared = {P*NCW{1'b0}};
        seg_headroom = {P*NCW{1'b0}};
        xoff_set = {P*NPRIO{1'b0}};
        shared_in_use = {1'b0, shared_total};
        lossy_in_use = {1'b0, lossy_shared_total};
        q = {PRW{1'b0}};
        g = 0;
        lossless = 1'b0;
        priv = {CW{1'b0}};
        shared = {CW{1'b0}};
        headroom = {CW{1'b0}};
        n = {CW{1'b0}};
        room = {CW{1'b0}};
        to_private = {CW{1'b0}};
        m = {CW{1'b0}};
        for (p = 0; p < P; p = p + 1) begin
            if (sop[p]) begin
                q = prio[p*PRW +: PRW];
                g = p * NPRIO + {{(32-PRW){1'b0}}, q};
                lossless = LOSSLESS_MASK[q];
                priv = grp_private[g*CW +: CW];
                shared = grp_shared[g*CW +: CW];
                headroom = grp_headroom[g*CW +: CW];
                n = {{(CW-NCW){1'b0}}, ncells[p*NCW +: NCW]};
                room = (lossless && priv < PHI_C) ? PHI_C - priv : {CW{1'b0}};
                to_private = n < room ? n : room;
                m = n - to_private;
                seg_private[p*NCW +: NCW] = to_private[NCW-1:0];
                if (m == {CW{1'b0}}) begin
                    admit[p] = 1'b1;
                end else if (lossless) begin
                    if (below_t(shared, t) && shared_in_use + {1'b0, m} <= B_S_C) begin
                        admit[p] = 1'b1;
                        seg_shared[p*NCW +: NCW] = m[NCW-1:0];
                        shared_in_use = shared_in_use + {1'b0, m};
                    end else if ({1'b0, headroom} + {1'b0, m} <= ETA_C) begin
                        admit[p] = 1'b1;
                        seg_headroom[p*NCW +: NCW] = m[NCW-1:0];
                        xoff_set[g] = 1'b1;
                    end else begin
                        // Case 4 implies case 3's condition: the queue pauses as well.
                        drop[p] = 1'b1;
                        xoff_set[g] = 1'b1;
                    end
                end else begin
                    if (below_t(shared, t_lossy) && lossy_in_use + {1'b0, m} <= B_LS_C) begin
                        admit[p] = 1'b1;
                        seg_shared[p*NCW +: NCW] = m[NCW-1:0];
                        lossy_in_use = lossy_in_use + {1'b0, m};
                    end else begin
                        drop[p] = 1'b1;
                        reason[p] = 1'b1;
                    end
                end
                if (!admit[p]) seg_private[p*NCW +: NCW] = {NCW{1'b0}};
            end
        end
    end
endmodule
