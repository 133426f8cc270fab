/* amxprobe.exe: one AMX tile instruction, run under wine by scripts/wine/test.sh
 * on a CPU with AMX. It prints "amx: tiles usable" when the instruction ran;
 * without amx-permit.so preloaded (amx-permit.c says why) Linux refuses the
 * tile data and the process dies of an illegal instruction, as ONNX Runtime's
 * AMX kernels do. Never run on a CPU without AMX. Test infrastructure. */
#include <stdio.h>
#include <string.h>

int main(void)
{
    /* A tile configuration: palette 1, tile 0 of 16 rows of 64 bytes. */
    unsigned char cfg[64];
    memset(cfg, 0, sizeof cfg);
    cfg[0] = 1;         /* palette_id */
    cfg[16] = 64;       /* colsb[0], low byte */
    cfg[48] = 16;       /* rows[0] */
    __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
    __asm__ volatile("tilezero %%tmm0" : : : "memory"); /* touches the tile data */
    __asm__ volatile("tilerelease" : : : "memory");
    printf("amx: tiles usable\n");
    return 0;
}
