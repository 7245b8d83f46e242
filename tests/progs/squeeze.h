/*
 * squeeze.h - for test programs that dlclose a plugin and load it again
 * (cp_dl.c, rt_reload.c): squeeze_note(path) notes where the plugin
 * (a path containing path) ends, before its dlclose; squeeze() then maps
 * the last page of its old place, so that the plugin comes back just
 * below, over the rest of that place, unless the profiler holds it
 * (runtime/common/modules.c).  Needs _GNU_SOURCE.
 */
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static uintptr_t squeeze_end; /* the end of the plugin's PT_LOAD range */

static int squeeze_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t hi = 0;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, (const char *)arg))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	squeeze_end = hi;
	return 1;
}

static void squeeze_note(const char *path)
{
	dl_iterate_phdr(squeeze_cb, (void *)path);
}

static void squeeze(void)
{
	if (squeeze_end)
		mmap((void *)(((squeeze_end + 4095) & ~(uintptr_t)4095) - 4096), 4096, PROT_READ,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
}
