/*
 * pylayout_gen.c - a build-time program, not part of any runtime: prints
 * pylayout.h, the offsets and constants of CPython's internals that
 * pyframes.c reads, taken from the installed interpreter's own headers
 * (Debian's python3-dev: /usr/include/python3.X, its internal/ headers
 * with Py_BUILD_CORE).  The Makefile compiles and runs it; when the
 * headers are missing, or are of a version whose layout this file does
 * not name (CPython 3.12 moved the frame's fields), it does not compile,
 * and the Makefile writes a pylayout.h that says so (PYL_NONE): the
 * runtime then shows Python programs by their native frames.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_gc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The byte and mask of the bit-field that sets `field` in PyASCIIObject's
 * state: set it in an object of zeros, look for the byte. */
#define STATE_BIT(label, field)                                                  \
	do {                                                                     \
		PyASCIIObject o;                                                 \
		memset(&o, 0, sizeof o);                                         \
		o.state.field = 1;                                               \
		for (size_t i = 0; i < sizeof o; i++)                            \
			if (((unsigned char *)&o)[i])                            \
				printf("#define PYL_STR_%s_AT %zu\n#define PYL_STR_%s_MASK 0x%x\n", \
				       label, i, label, ((unsigned char *)&o)[i]);       \
	} while (0)

int main(void)
{

	printf("/* Made by runtime/lang/pylayout_gen.c from Python %s's headers. */\n",
	       PY_VERSION);
	printf("#define PYL_VERSION \"%s\"\n", PY_VERSION);
	/* Layouts hold within a minor version (3.11.x). */
	printf("#define PYL_HEX 0x%08xu\n", (unsigned)(PY_VERSION_HEX & 0xffff0000));
	printf("#define PYL_TS_CFRAME %zu\n", offsetof(PyThreadState, cframe));
	printf("#define PYL_RT_TSTATE %zu\n", offsetof(_PyRuntimeState, gilstate.tstate_current));
	printf("#define PYL_RT_FINALIZING %zu\n", offsetof(_PyRuntimeState, _finalizing));
	/* Another thread's state, by its kernel id (cpprof's watcher). */
	printf("#define PYL_RT_INTERP_HEAD %zu\n", offsetof(_PyRuntimeState, interpreters.head));
	printf("#define PYL_IS_NEXT %zu\n", offsetof(PyInterpreterState, next));
	printf("#define PYL_IS_THREADS %zu\n", offsetof(PyInterpreterState, threads.head));
	printf("#define PYL_TS_NEXT %zu\n", offsetof(PyThreadState, next));
	printf("#define PYL_TS_NATIVE_ID %zu\n", offsetof(PyThreadState, native_thread_id));
	printf("#define PYL_TS_THREAD_ID %zu\n", offsetof(PyThreadState, thread_id));
	printf("#define PYL_CF_CURRENT %zu\n", offsetof(_PyCFrame, current_frame));
	printf("#define PYL_FR_CODE %zu\n", offsetof(_PyInterpreterFrame, f_code));
	printf("#define PYL_FR_PREVIOUS %zu\n", offsetof(_PyInterpreterFrame, previous));
	printf("#define PYL_FR_PREV_INSTR %zu\n", offsetof(_PyInterpreterFrame, prev_instr));
	printf("#define PYL_FR_IS_ENTRY %zu\n", offsetof(_PyInterpreterFrame, is_entry));
	printf("#define PYL_FR_OWNER %zu\n", offsetof(_PyInterpreterFrame, owner));
	/* pyframes.c reads the two marks as one 16-bit word. */
	if (offsetof(_PyInterpreterFrame, owner) != offsetof(_PyInterpreterFrame, is_entry) + 1)
		return 1;
	printf("#define PYL_OWNED_BY_GENERATOR %d\n", FRAME_OWNED_BY_GENERATOR);
	printf("#define PYL_OB_TYPE %zu\n", offsetof(PyObject, ob_type));
	printf("#define PYL_TP_NAME %zu\n", offsetof(PyTypeObject, tp_name));
	/* An object's type, from the block the allocator gave: after the
	 * collector's header if the type has one. */
	printf("#define PYL_TP_FLAGS %zu\n", offsetof(PyTypeObject, tp_flags));
	printf("#define PYL_HAVE_GC 0x%lxul\n", (unsigned long)Py_TPFLAGS_HAVE_GC);
	printf("#define PYL_GC_HEAD %zu\n", sizeof(PyGC_Head));
	printf("#define PYL_TYPE_SUBCLASS 0x%lxul\n", (unsigned long)Py_TPFLAGS_TYPE_SUBCLASS);
	printf("#define PYL_CO_QUALNAME %zu\n", offsetof(PyCodeObject, co_qualname));
	printf("#define PYL_CO_FILENAME %zu\n", offsetof(PyCodeObject, co_filename));
	printf("#define PYL_CO_FIRSTLINENO %zu\n", offsetof(PyCodeObject, co_firstlineno));
	printf("#define PYL_CO_FIRSTTRACEABLE %zu\n", offsetof(PyCodeObject, _co_firsttraceable));
	printf("#define PYL_CO_CODE %zu\n", offsetof(PyCodeObject, co_code_adaptive));
	printf("#define PYL_CO_LINETABLE %zu\n", offsetof(PyCodeObject, co_linetable));
	printf("#define PYL_VAR_SIZE %zu\n", offsetof(PyVarObject, ob_size));
	printf("#define PYL_BYTES_DATA %zu\n", offsetof(PyBytesObject, ob_sval));
	/* The cursor of _PyCode_CheckLineNumber (cpython/code.h), which
	 * pyframes.c lays out itself and checks against these. */
	printf("#define PYL_RANGE_SIZE %zu\n", sizeof(PyCodeAddressRange));
	printf("#define PYL_RANGE_LINE %zu\n", offsetof(PyCodeAddressRange, ar_line));
	printf("#define PYL_RANGE_LINE0 %zu\n", offsetof(PyCodeAddressRange, opaque.computed_line));
	printf("#define PYL_RANGE_NEXT %zu\n", offsetof(PyCodeAddressRange, opaque.lo_next));
	printf("#define PYL_RANGE_LIMIT %zu\n", offsetof(PyCodeAddressRange, opaque.limit));
	printf("#define PYL_CODEUNIT %zu\n", sizeof(_Py_CODEUNIT));
	printf("#define PYL_STR_LENGTH %zu\n", offsetof(PyASCIIObject, length));
	printf("#define PYL_STR_ASCII_DATA %zu\n", sizeof(PyASCIIObject));
	printf("#define PYL_STR_COMPACT_DATA %zu\n", sizeof(PyCompactUnicodeObject));
	STATE_BIT("COMPACT", compact);
	STATE_BIT("ASCII", ascii);
	/* kind: 3 bits; its byte and shift, from setting it to 1. */
	{
		PyASCIIObject o;
		memset(&o, 0, sizeof o);
		o.state.kind = 1;
		for (size_t i = 0; i < sizeof o; i++) {
			unsigned b = ((unsigned char *)&o)[i];
			if (b)
				printf("#define PYL_STR_KIND_AT %zu\n#define PYL_STR_KIND_SHIFT %d\n", i,
				       __builtin_ctz(b));
		}
	}
	return 0;
}
