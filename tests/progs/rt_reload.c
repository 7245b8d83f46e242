/*
 * rt_reload.c PLUGIN [squeeze]: dlopen the plugin, keep an object it
 * allocates (1000 bytes, then 1001), dlclose it, twice over.  squeeze:
 * after each dlclose, map the last page of the plugin's old place, so that
 * it comes back just below, over the rest of its old place, unless the
 * monitor holds that (runtime/common/modules.c).  Prints "ok".
 */
#define _GNU_SOURCE /* dl_iterate_phdr, MAP_FIXED_NOREPLACE */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static void *kept[2];
static uintptr_t plugin_end; /* the end of the plugin's PT_LOAD range */

static int find_end(struct dl_phdr_info *info, size_t size, void *arg)
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
	plugin_end = hi;
	return 1;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 2; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		void *(*f)(size_t);

		if (!h || !(f = (void *(*)(size_t))dlsym(h, "plug_alloc")))
			return 1;
		kept[i] = f(1000 + (size_t)i);
		dl_iterate_phdr(find_end, argv[1]);
		dlclose(h);
		if (argc > 2 && !strcmp(argv[2], "squeeze") && plugin_end)
			mmap((void *)(((plugin_end + 4095) & ~(uintptr_t)4095) - 4096), 4096, PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	}
	printf("ok\n");
	return 0;
}
