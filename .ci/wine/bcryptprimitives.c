/*
 * Stand-in bcryptprimitives.dll for running Go windows test binaries under wine.
 *
 * Go 1.22+ gets its random bytes from ProcessPrng in bcryptprimitives.dll and
 * aborts at startup if it is missing. Debian 12's wine 8.0 ships no such
 * export, so .ci/wine.sh builds this file with mingw-w64 and drops the DLL in
 * the wine prefix's system32. It forwards to advapi32's SystemFunction036
 * (RtlGenRandom), which wine does provide. Only for CI under wine; never
 * shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, chunk))
			return FALSE;
		data += chunk;
		len -= chunk;
	}
	return TRUE;
}
