/* amx-permit.so: asks Linux for permission to use AMX tiles, in every process
 * it is preloaded into (LD_PRELOAD), before any of that process's code runs.
 *
 * Why: ONNX Runtime's MLAS picks its AMX int8 kernels whenever CPUID reports
 * AMX (an Intel Xeon of Sapphire Rapids or later). On Linux a process may use
 * the AMX tile registers only after it has asked the kernel for them with
 * arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); the first tile
 * instruction of a process that did not ask is an illegal instruction
 * (SIGILL). The Linux ONNX Runtime asks. Windows grants AMX to every process,
 * so the Windows onnxruntime.dll never asks, and under wine it dies on its
 * first embedding. wine cannot ask for it either.
 *
 * The permission belongs to the process and does not survive execve, so a
 * launcher that asks and then runs wine does not help: it has to be asked
 * inside the wine process, which is what a preloaded constructor does.
 * scripts/wine/setup.sh builds this with the host's C compiler and writes the
 * wrapper data/wine/bin/wine64 that preloads it. On a CPU without AMX the call
 * fails with EINVAL and nothing changes. Test infrastructure; never shipped. */
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

__attribute__((constructor)) static void amx_permit(void)
{
    syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
}
