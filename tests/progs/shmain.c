/* shmain.c - the program half: keeps 25 nodes of 96 bytes made in libshlib.so. */
struct shlib_node;
struct shlib_node *shlib_make(int n);
struct shlib_node *keep;

int main(void)
{
	keep = shlib_make(25);
	return 0;
}
