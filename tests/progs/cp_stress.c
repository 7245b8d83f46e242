/* cp_stress PLUGIN: 300 rounds of: 4 threads created, each doing 200
 * malloc/free and open/read/close; the plugin dlopen'd, called, dlclose'd;
 * every 50th round a fork whose child does the same work.  For sampling
 * while threads come and go, modules are unloaded and processes fork. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
static const char *plug;
static void *worker(void *a) {
	for (int i = 0; i < 200; i++) { void *p = malloc(100 + i); memset(p, 1, 100); free(p);
		char buf[64]; int fd = open("/dev/zero", 0); read(fd, buf, 64); close(fd); }
	return a;
}
int main(int argc, char **argv) {
	plug = argv[1];
	for (int r = 0; r < 300; r++) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, NULL);
		void *h = dlopen(plug, RTLD_NOW); if (h) { void *(*f)(unsigned long) = dlsym(h, "plugin_burn"); if (f) f(100000); dlclose(h); }
		if (r % 50 == 0) { pid_t p = fork(); if (p == 0) { worker(0); exit(0); } waitpid(p, 0, 0); }
		for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
	}
	printf("done\n");
	return 0;
}
