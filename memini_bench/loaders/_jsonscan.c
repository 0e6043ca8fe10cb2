/* The end of one JSON value in a byte buffer, so a large array can be cut into its elements and each element parsed
 * on its own (loaders/_stream.py). Optional, like retrieval/_kernels.c: without it the stream parses with json's own
 * scanner. It only finds where a value ends; the value's bytes are then parsed (and checked) by orjson.
 *
 * value_end(buf, pos, final) -> end
 *   buf    a bytes-like object; pos the offset of the value's first byte (not whitespace)
 *   An object or array ends after the bracket that closes its first one (brackets counted outside strings, a
 *   string running from an unescaped '"' to the next unescaped '"'); a string after its closing quote; anything
 *   else (a number, a literal, garbage) at the next whitespace, ',', ']' or '}'. Returns that end offset, or -1
 *   when the buffer ends first and ``final`` is false (more bytes may complete it); with ``final`` the end of the
 *   buffer ends the value (the parser then says what is wrong with it).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *value_end(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t pos;
    int final;
    if (!PyArg_ParseTuple(args, "y*np", &view, &pos, &final)) return NULL;
    const unsigned char *s = view.buf;
    const Py_ssize_t n = view.len;
    Py_ssize_t end = -1;
    if (pos < 0 || pos > n) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "value_end: pos outside the buffer");
        return NULL;
    }
    Py_ssize_t i = pos;
    if (i < n && (s[i] == '{' || s[i] == '[')) {
        Py_ssize_t depth = 0;
        while (i < n) {
            const unsigned char c = s[i];
            if (c == '"') {
                i++;
                for (;;) {  /* to the closing quote: memchr for the next quote, then count the backslashes before it */
                    const unsigned char *q = memchr(s + i, '"', (size_t)(n - i));
                    if (q == NULL) {
                        i = n;
                        break;
                    }
                    Py_ssize_t at = q - s, back = 0;
                    while (at - 1 - back >= pos && s[at - 1 - back] == '\\') back++;
                    i = at + 1;
                    if (back % 2 == 0) break;
                }
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    end = i + 1;
                    break;
                }
            }
            i++;
        }
    } else if (i < n && s[i] == '"') {
        i++;
        for (; i < n; i++) {
            if (s[i] == '\\') i++;
            else if (s[i] == '"') {
                end = i + 1;
                break;
            }
        }
    } else {
        for (; i < n; i++) {
            const unsigned char c = s[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}') {
                end = i;
                break;
            }
        }
    }
    if (end < 0 && final) end = n;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(end);
}

static PyMethodDef methods[] = {
    {"value_end", value_end, METH_VARARGS, "Where the JSON value at pos ends (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jsonscan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__jsonscan(void) { return PyModule_Create(&module); }
