// Verilator's C++ main of dpi_tb.sv: the clock and reset; exit 0 if the model's checker
// found the RTL consistent, 1 if it found divergences, 2 if an event was refused.
#include "Vdpi_tb.h"
#include "mmu_model.h"
#include "verilated.h"
#include <cstdio>

int main(int argc, char **argv) {
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    Vdpi_tb top{&ctx};
    top.rst = 1;
    for (int edge = 0; !top.done && !ctx.gotFinish(); edge++) {
        top.clk = edge & 1;
        if (edge == 20) top.rst = 0;
        top.eval();
        ctx.timeInc(1);
    }
    top.final();
    if (top.failed == 2) {
        char msg[512];
        mmu_last_error(msg, sizeof msg);
        std::fprintf(stderr, "dpi: %s\n", msg);
    }
    return top.failed;
}
