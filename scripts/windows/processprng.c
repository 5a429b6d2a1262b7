/* A test shim for Wine 8, which lacks bcryptprimitives.dll: Rust's standard library imports
 * ProcessPrng from it. Placed beside the test programs run under Wine, never shipped (real
 * Windows has the DLL). RtlGenRandom is advapi32's SystemFunction036. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
