/* The end of one JSON value in a byte buffer, so a large array can be cut into its elements and each element parsed
 * on its own (loaders/_stream.py). Optional, like retrieval/_kernels.c: without it the stream parses with json's own
 * scanner. It only finds where a value ends; the value's bytes are then parsed (and checked) by orjson.
 *
 * member_elements(buf, start, end, key): an object member's array elements, for a stream that parses each distinct
 *   element once (below).
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

#include "../_vec.h"

/* The end of the value at s[pos] within s[0:n] (see value_end), -1 when the buffer ends first. */
static Py_ssize_t scan_end(const unsigned char *s, Py_ssize_t pos, Py_ssize_t n) {
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
                if (--depth == 0) return i + 1;
            }
            i++;
        }
    } else if (i < n && s[i] == '"') {
        i++;
        for (; i < n; i++) {
            if (s[i] == '\\') i++;
            else if (s[i] == '"') return i + 1;
        }
    } else {
        for (; i < n; i++) {
            const unsigned char c = s[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' || c == '}') return i;
        }
    }
    return -1;
}

static PyObject *value_end(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t pos;
    int final;
    if (!PyArg_ParseTuple(args, "y*np", &view, &pos, &final)) return NULL;
    if (pos < 0 || pos > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "value_end: pos outside the buffer");
        return NULL;
    }
    Py_ssize_t end = scan_end(view.buf, pos, view.len);
    if (end < 0 && final) end = view.len;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(end);
}

static Py_ssize_t skip_ws(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* The spans of the elements of the array s[start:end) (exactly one array, its separators well formed) onto ``out``
 * as (start, end) pairs; 0 when it is not such an array, -1 when out of memory. */
static int element_spans(const unsigned char *s, Py_ssize_t start, Py_ssize_t end, Vec *out) {
    Py_ssize_t i = start;
    if (i >= end || s[i] != '[') return 0;
    i = skip_ws(s, i + 1, end);
    if (i < end && s[i] == ']') return i + 1 == end;
    for (;;) {
        const Py_ssize_t ve = scan_end(s, i, end);
        if (ve < 0 || ve == i) return 0;
        const Py_ssize_t span[2] = {i, ve};
        if (vec_push(out, span) < 0) return -1;
        i = skip_ws(s, ve, end);
        if (i < end && s[i] == ',') {
            i = skip_ws(s, i + 1, end);
            continue;
        }
        if (i < end && s[i] == ']' && i + 1 == end) return 1;
        return 0;
    }
}

/* member_elements(buf, start, end, key) -> (value_start, value_end, spans) or None
 *   When buf[start:end) is one object whose keys hold no backslash, ``key`` (bytes) is one of them exactly once, and
 *   its value is an array with well-formed separators: that value's span and its elements' spans (int64 start, end
 *   pairs as bytes). None otherwise (the caller then parses the whole object, and its parser judges it). */
static PyObject *member_elements(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view, key;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "y*nny*", &view, &start, &end, &key)) return NULL;
    PyObject *result = NULL;
    Vec spans = {NULL, 0, 0, 2 * sizeof(Py_ssize_t)};
    const unsigned char *s = view.buf;
    if (start < 0 || end > view.len || start > end) {
        PyErr_SetString(PyExc_ValueError, "member_elements: span outside the buffer");
        goto done;
    }
    Py_ssize_t i = skip_ws(s, start, end), vs = -1, ve = -1;
    if (i >= end || s[i] != '{') goto none;
    i = skip_ws(s, i + 1, end);
    for (;;) {
        if (i >= end || s[i] != '"') goto none;
        const Py_ssize_t ks = i + 1;
        const unsigned char *q = memchr(s + ks, '"', (size_t)(end - ks));
        if (q == NULL) goto none;
        const Py_ssize_t ke = q - s;
        if (memchr(s + ks, '\\', (size_t)(ke - ks)) != NULL) goto none;
        i = skip_ws(s, ke + 1, end);
        if (i >= end || s[i] != ':') goto none;
        i = skip_ws(s, i + 1, end);
        const Py_ssize_t at = i, stop = scan_end(s, i, end);
        if (stop < 0 || stop == at) goto none;
        if (ke - ks == key.len && memcmp(s + ks, key.buf, (size_t)key.len) == 0) {
            if (vs >= 0) goto none;
            vs = at, ve = stop;
        }
        i = skip_ws(s, stop, end);
        if (i < end && s[i] == ',') {
            i = skip_ws(s, i + 1, end);
            continue;
        }
        if (i < end && s[i] == '}') {
            i = skip_ws(s, i + 1, end);
            break;
        }
        goto none;
    }
    if (i != end || vs < 0 || s[vs] != '[') goto none;
    const int got = element_spans(s, vs, ve, &spans);
    if (got < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (got == 0) goto none;
    PyObject *packed = PyBytes_FromStringAndSize(spans.data ? spans.data : "", (Py_ssize_t)(spans.n * spans.size));
    if (packed == NULL) goto done;
    result = Py_BuildValue("(nnN)", vs, ve, packed);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    free(spans.data);
    PyBuffer_Release(&view);
    PyBuffer_Release(&key);
    return result;
}

static PyMethodDef methods[] = {
    {"value_end", value_end, METH_VARARGS, "Where the JSON value at pos ends (see the source)."},
    {"member_elements", member_elements, METH_VARARGS, "An object member's array elements (see the source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jsonscan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__jsonscan(void) { return PyModule_Create(&module); }
