/* bcryptprimitives.dll for wine prefixes that lack it (wine 8.0).
 *
 * Go 1.22 and later take their random bytes from ProcessPrng in
 * bcryptprimitives.dll and load it from System32 only, so without this DLL
 * every Go program dies at start under wine. RtlGenRandom (advapi32's
 * SystemFunction036) gives the same guarantee: it fills the buffer or fails.
 * Test infrastructure for running Windows builds under wine; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG: feed large requests in pieces. */
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst; (void)reason; (void)reserved;
    return TRUE;
}
