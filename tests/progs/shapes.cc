// shapes.cc - C++: objects made with new, a class in a namespace, a typedef;
// the bins must name them, the stacks must run through operator new.
#include <cstring>

namespace shapes {
class Circle {
public:
	explicit Circle(int r) : radius(r) { std::memset(label, 0, sizeof(label)); }
	int radius;
	char label[68];
};
} // namespace shapes

typedef struct {
	double x, y, z;
	char tag[16];
} point3_t; // 40 bytes

shapes::Circle *keep[10];
point3_t *pts;

__attribute__((noinline)) shapes::Circle *make_circle(int r)
{
	return new shapes::Circle(r);
}

int main()
{
	for (int i = 0; i < 30; i++) {
		shapes::Circle *c = make_circle(i);
		if (i < 10)
			keep[i] = c;
		else
			delete c;
	}
	pts = new point3_t[1];
	return 0;
}
