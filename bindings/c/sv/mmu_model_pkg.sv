// The C ABI of the mmu-sim golden-model checker (include/mmu_model.h) for SystemVerilog:
// one `import "DPI-C"` per function, the header's constants as localparams. A monitor
// calls the event functions as the RTL runs (docs/cosim.md, "SystemVerilog DPI-C").
// tests/abi.rs fails if this file and the header drift apart (names, arguments, types).
// Types: uint64_t = longint unsigned, uint32_t = int unsigned, uint16_t = shortint
// unsigned, uint8_t = byte unsigned, int32_t = int, const char * = string, other
// pointers (the handle, a buffer) = chandle.
package mmu_model_pkg;

  localparam int MMU_OK = 0;
  localparam int MMU_ERR_NULL = -1;
  localparam int MMU_ERR_INPUT = -2;
  localparam int MMU_ERR_PANIC = -3;
  localparam int MMU_MODE_FOLLOW = 0;
  localparam int MMU_MODE_LOCKSTEP = 1;
  localparam int MMU_LINE_RATE_SCENARIO = 0;
  localparam int MMU_LINE_RATE_CELL_PER_CYCLE = 1;
  localparam int MMU_DECISIONS_REPORTED = 0;
  localparam int MMU_DECISIONS_INFERRED = 1;
  localparam int MMU_PFC_SENT = 0;
  localparam int MMU_PFC_RECEIVED = 1;

  import "DPI-C" function chandle mmu_new(string scenario, int unsigned mode,
                                          int unsigned line_rate,
                                          longint unsigned pfc_tolerance);
  import "DPI-C" function chandle mmu_new_decisions(string scenario, int unsigned mode,
                                                    int unsigned line_rate,
                                                    longint unsigned pfc_tolerance,
                                                    int unsigned decisions);
  import "DPI-C" function void mmu_free(chandle h);
  import "DPI-C" function int mmu_last_error(chandle out, int unsigned len);
  import "DPI-C" function int mmu_arrive(chandle h, longint unsigned cycle,
                                         byte unsigned port, byte unsigned prio,
                                         int unsigned flow, int unsigned seq,
                                         int unsigned bytes, byte unsigned dst,
                                         shortint unsigned ncells);
  import "DPI-C" function int mmu_arrive_crc(chandle h, longint unsigned cycle,
                                             byte unsigned port, byte unsigned prio,
                                             int unsigned flow, int unsigned seq,
                                             int unsigned bytes, byte unsigned dst,
                                             shortint unsigned ncells, int unsigned crc);
  import "DPI-C" function int mmu_admit(chandle h, longint unsigned cycle,
                                        byte unsigned port, int unsigned flow,
                                        int unsigned seq, int unsigned private_cells,
                                        int unsigned shared_cells,
                                        int unsigned headroom_cells);
  import "DPI-C" function int mmu_drop(chandle h, longint unsigned cycle,
                                       byte unsigned port, int unsigned flow,
                                       int unsigned seq, string reason);
  import "DPI-C" function int mmu_depart(chandle h, longint unsigned cycle,
                                         byte unsigned port, byte unsigned queue_id,
                                         int unsigned flow, int unsigned seq,
                                         byte unsigned src, shortint unsigned ncells);
  import "DPI-C" function int mmu_depart_crc(chandle h, longint unsigned cycle,
                                             byte unsigned port, byte unsigned queue_id,
                                             int unsigned flow, int unsigned seq,
                                             byte unsigned src, shortint unsigned ncells,
                                             int unsigned crc);
  import "DPI-C" function int mmu_pfc(chandle h, longint unsigned cycle,
                                      byte unsigned port, byte unsigned cls,
                                      byte unsigned pause, byte unsigned dir);
  import "DPI-C" function int mmu_meta(chandle h, string params);
  import "DPI-C" function int unsigned mmu_warnings(chandle h);
  import "DPI-C" function string mmu_warning_text(chandle h, int unsigned i);
  import "DPI-C" function int mmu_finish(chandle h);
  import "DPI-C" function int unsigned mmu_errors(chandle h);
  import "DPI-C" function longint unsigned mmu_error_cycle(chandle h, int unsigned i);
  import "DPI-C" function string mmu_error_check(chandle h, int unsigned i);
  import "DPI-C" function int mmu_error_message(chandle h, int unsigned i, chandle out,
                                                int unsigned len);
  import "DPI-C" function string mmu_error_text(chandle h, int unsigned i);

endpackage
