/* The hash embedder's words in C (embed/hashing.py; optional, built by setup.py like retrieval/_kernels.c; without
 * it the embedder splits and hashes in Python, with the same words and buckets, and tests compare them).
 *
 * hash_buckets(texts, dims, bucket_of) -> (buckets, sizes), two bytes objects
 *   The hash embedder's words (Go's strings.Fields(strings.ToLower(text)): runs of characters that are not Go's
 *   unicode.IsSpace) and each word's bucket, text after text: an ASCII word's is FNV-1a-32 of its lowercased bytes
 *   mod dims; any other word's is bucket_of(word), the Python path's (lowercasing and hashing it). buckets int64
 *   per word, sizes int64 words per text. The scan runs without the GIL (the bulk of a hash embedding: another
 *   thread runs meanwhile); the words left to bucket_of are called back after it, with the GIL.
 *
 * fields_joined(text) -> str
 *   Go's strings.Join(strings.Fields(text), " "): the runs of non-spaces (unicode.IsSpace, as above) joined by one
 *   space, nothing before the first or after the last (the dedup key before lowercasing).
 *
 * utf8_length(text) -> int
 *   The length of text.encode("utf-8") without encoding it; -1 when the text holds a lone surrogate (which that
 *   encoding refuses: the caller then encodes, and gets its error).
 *
 * normalized_hashes(texts) -> bytes
 *   Per text (a list of str), a 64-bit FNV-1a hash (uint64) of the code points of its dedup key
 *   (``composite.normalize_content``: fields_joined, then each character's simple lowercase mapping, which is Go's
 *   strings.ToLower and ``go_strings.go_lower``), computed in one pass without making the key. Equal keys give
 *   equal hashes; the caller compares the keys themselves wherever two texts' hashes are equal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../_vec.h"

/* unicode.IsSpace of Go (the White_Space property; U+001C..U+001F are not spaces there). */
static inline int go_space(Py_UCS4 c) {
    if (c < 128) return c == ' ' || (c >= '\t' && c <= '\r');
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

/* A word hash_buckets leaves to bucket_of (not ASCII): which text, where, and its slot in the buckets. */
typedef struct {
    Py_ssize_t text, start, end;
    size_t slot;
} Pending;

/* The scan of hash_buckets over the texts' characters, run without the GIL (the strings are immutable and held by
 * the caller's references): each ASCII word's bucket, each other word a Pending and a placeholder bucket. Returns
 * -1 when out of memory. */
static int scan_words(PyObject **texts, Py_ssize_t n_texts, Py_ssize_t dims, Vec *buckets, Vec *pending,
                      int64_t *sizes) {
    for (Py_ssize_t x = 0; x < n_texts; x++) {
        PyObject *text = texts[x];
        const int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
        int64_t words = 0;
        for (Py_ssize_t i = 0; i < len;) {
            while (i < len && go_space(PyUnicode_READ(kind, data, i))) i++;
            if (i >= len) break;
            const Py_ssize_t start = i;
            uint32_t h = 0x811C9DC5u;
            int ascii = 1;
            for (; i < len; i++) {
                const Py_UCS4 c = PyUnicode_READ(kind, data, i);
                if (go_space(c)) break;
                if (c >= 128) ascii = 0;
                if (ascii) h = (h ^ (uint32_t)(c >= 'A' && c <= 'Z' ? c + 32 : c)) * 0x01000193u;
            }
            int64_t bucket = -1;
            if (ascii) {
                bucket = (int64_t)(h % (uint32_t)dims);
            } else {
                Pending p = {x, start, i, buckets->n};
                if (vec_push(pending, &p) < 0) return -1;
            }
            if (vec_push(buckets, &bucket) < 0) return -1;
            words++;
        }
        sizes[x] = words;
    }
    return 0;
}

static PyObject *hash_buckets(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *texts, *bucket_of, *result = NULL;
    Py_ssize_t dims;
    if (!PyArg_ParseTuple(args, "O!nO", &PyList_Type, &texts, &dims, &bucket_of)) return NULL;
    if (dims <= 0) {
        PyErr_SetString(PyExc_ValueError, "hash_buckets: dims must be positive");
        return NULL;
    }
    const Py_ssize_t n_texts = PyList_GET_SIZE(texts);
    Vec buckets = {NULL, 0, 0, sizeof(int64_t)}, pending = {NULL, 0, 0, sizeof(Pending)};
    int64_t *sizes = malloc((n_texts ? (size_t)n_texts : 1) * sizeof(int64_t));
    PyObject **held = calloc(n_texts ? (size_t)n_texts : 1, sizeof(PyObject *));  /* a reference to each text */
    if (sizes == NULL || held == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t x = 0; x < n_texts; x++) {
        PyObject *text = PyList_GET_ITEM(texts, x);
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "hash_buckets: texts must be a list of str");
            goto done;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(text) < 0) goto done;
#endif
        Py_INCREF(text);
        held[x] = text;
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS  /* the bulk of an embedding: another thread (embed.background's) may run meanwhile */
    failed = scan_words(held, n_texts, dims, &buckets, &pending, sizes);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t j = 0; j < pending.n; j++) {
        const Pending *p = (const Pending *)(pending.data + j * sizeof(Pending));
        PyObject *word = PyUnicode_Substring(held[p->text], p->start, p->end);
        if (word == NULL) goto done;
        PyObject *got = PyObject_CallOneArg(bucket_of, word);
        Py_DECREF(word);
        if (got == NULL) goto done;
        const int64_t bucket = PyLong_AsLongLong(got);
        Py_DECREF(got);
        if (bucket == -1 && PyErr_Occurred()) goto done;
        if (bucket < 0 || bucket >= dims) {
            PyErr_SetString(PyExc_ValueError, "hash_buckets: bucket_of gave a bucket outside [0, dims)");
            goto done;
        }
        ((int64_t *)buckets.data)[p->slot] = bucket;
    }
    result = Py_BuildValue("(y#y#)", buckets.data ? buckets.data : "", (Py_ssize_t)(buckets.n * sizeof(int64_t)),
                           (const char *)sizes, (Py_ssize_t)(n_texts * sizeof(int64_t)));
done:
    if (held != NULL)
        for (Py_ssize_t x = 0; x < n_texts; x++) Py_XDECREF(held[x]);
    free(held);
    free(buckets.data);
    free(pending.data);
    free(sizes);
    return result;
}

static PyObject *fields_joined(PyObject *self, PyObject *text) {
    (void)self;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "fields_joined: text must be a str");
        return NULL;
    }
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *out = PyMem_Malloc((len ? (size_t)len : 1) * sizeof(Py_UCS4));
    if (out == NULL) return PyErr_NoMemory();
    Py_ssize_t n = 0;
    int gap = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        const Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (go_space(c)) {
            gap = n > 0;
            continue;
        }
        if (gap) out[n++] = ' ';
        gap = 0;
        out[n++] = c;
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n);  /* narrowed to its own kind */
    PyMem_Free(out);
    return result;
}

/* FNV-1a over a dedup key's code points, fed one character of the text at a time (normalized_hashes). */
typedef struct {
    uint64_t h;
    int gap, any;  /* a space run seen since the last character kept; any character kept yet */
} KeyHash;

static inline void key_hash_add(KeyHash *k, Py_UCS4 c) {
    if (go_space(c)) {
        k->gap = k->any;
        return;
    }
    if (k->gap) k->h = (k->h ^ (uint64_t)' ') * 1099511628211ULL;
    k->gap = 0, k->any = 1;
    c = c < 128 ? (c >= 'A' && c <= 'Z' ? c + 32 : c) : Py_UNICODE_TOLOWER(c);
    k->h = (k->h ^ (uint64_t)c) * 1099511628211ULL;
}

static PyObject *normalized_hashes(PyObject *self, PyObject *texts) {
    (void)self;
    if (!PyList_Check(texts)) {
        PyErr_SetString(PyExc_TypeError, "normalized_hashes: texts must be a list of str");
        return NULL;
    }
    const Py_ssize_t n_texts = PyList_GET_SIZE(texts);
    PyObject *result = PyBytes_FromStringAndSize(NULL, n_texts * (Py_ssize_t)sizeof(uint64_t));
    if (result == NULL) return NULL;
    uint64_t *out = (uint64_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t x = 0; x < n_texts; x++) {
        PyObject *text = PyList_GET_ITEM(texts, x);
        if (!PyUnicode_Check(text)) {
            Py_DECREF(result);
            PyErr_SetString(PyExc_TypeError, "normalized_hashes: texts must be a list of str");
            return NULL;
        }
        const int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
        KeyHash k = {1469598103934665603ULL, 0, 0};
        if (kind == PyUnicode_1BYTE_KIND) {
            for (Py_ssize_t i = 0; i < len; i++) key_hash_add(&k, ((const Py_UCS1 *)data)[i]);
        } else {
            for (Py_ssize_t i = 0; i < len; i++) key_hash_add(&k, PyUnicode_READ(kind, data, i));
        }
        out[x] = k.h;
    }
    return result;
}

static PyObject *utf8_length(PyObject *self, PyObject *text) {
    (void)self;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "utf8_length: text must be a str");
        return NULL;
    }
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    Py_ssize_t n = len;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *one = data;
        for (Py_ssize_t i = 0; i < len; i++) n += one[i] >= 0x80;
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *two = data;
        for (Py_ssize_t i = 0; i < len; i++) {
            const Py_UCS2 c = two[i];
            if (c >= 0xD800 && c <= 0xDFFF) return PyLong_FromLong(-1);
            n += (c >= 0x80) + (c >= 0x800);
        }
    } else {
        const Py_UCS4 *four = data;
        for (Py_ssize_t i = 0; i < len; i++) {
            const Py_UCS4 c = four[i];
            if (c >= 0xD800 && c <= 0xDFFF) return PyLong_FromLong(-1);
            n += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000);
        }
    }
    return PyLong_FromSsize_t(n);
}

static PyMethodDef methods[] = {
    {"hash_buckets", hash_buckets, METH_VARARGS, "The hash embedder's word buckets of texts (see the source)."},
    {"fields_joined", fields_joined, METH_O, "Go's strings.Join(strings.Fields(text), \" \") (see the source)."},
    {"normalized_hashes", normalized_hashes, METH_O, "Per text, a hash of its dedup key (see the source)."},
    {"utf8_length", utf8_length, METH_O, "The length of text.encode('utf-8'), -1 on a lone surrogate."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_words", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__words(void) { return PyModule_Create(&module); }
