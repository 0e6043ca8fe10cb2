/* A growable array of fixed-size items, shared by the optional C extensions (retrieval/_kernels.c,
 * text/_words.c): `Vec v = {NULL, 0, 0, sizeof(item)}`, `vec_push(&v, &item)` (-1 when out of memory), `free(v.data)`. */
#ifndef MEMINI_BENCH_VEC_H
#define MEMINI_BENCH_VEC_H

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;
    size_t n, cap, size;
} Vec;

static int vec_push(Vec *v, const void *item) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        char *data = realloc(v->data, cap * v->size);
        if (data == NULL) return -1;
        v->data = data, v->cap = cap;
    }
    memcpy(v->data + v->n * v->size, item, v->size);
    v->n++;
    return 0;
}

#endif
