/*
 * Bookkeeping shared by the test nodes, so that the tests can see what the server did.
 *
 * Every pointer a node hands out (outputs arrays, data, dims, metadata arrays) is registered
 * with the manager it was made for; release() counts a pointer coming back once, and counts
 * anything else (unknown, twice, wrong manager) as bad. Managers live in a static table and
 * are never freed, so that a call with a deinitialized manager is caught, not undefined.
 * Read the counters with ctypes: counters(uint64_t out[COUNTER_COUNT]).
 *
 * A node including this file defines execute(); it gets the default initialize/deinitialize
 * unless it defines NODE_OWN_INITIALIZE, and the default metadata (input `input_numbers` and
 * output `output_numbers`, FP32 [1, 0], plus one unnamed output entry) unless it defines
 * NODE_OWN_METADATA.
 */
#ifndef OVMSX_TEST_COUNTING_H
#define OVMSX_TEST_COUNTING_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "custom_node_interface.h"

enum {
  ALLOCATED,      /* pointers handed out */
  RELEASED,       /* pointers given back once, with their manager */
  BAD_RELEASES,   /* release of a pointer not out (unknown or released before) */
  BAD_MANAGERS,   /* a call with a manager other than the one initialize made */
  INITIALIZED,    /* successful initialize calls */
  DEINITIALIZED,  /* deinitialize calls */
  LIVE_AT_DEINIT, /* pointers still out when their manager was deinitialized */
  COUNTER_COUNT
};

#define MAX_LIVE 4096
#define MAX_MANAGERS 1024

struct manager {
  int state; /* 0 unused, 1 initialized, 2 deinitialized */
  uint64_t live;
};

struct live_pointer {
  void* ptr;
  struct manager* owner;
};

static pthread_mutex_t counting_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t counts[COUNTER_COUNT];
static struct manager managers[MAX_MANAGERS];
static size_t managers_used;
static struct live_pointer live[MAX_LIVE];
static size_t live_count;

/* Caller holds counting_lock. */
static inline struct manager* known_manager(void* candidate) {
  for (size_t i = 0; i < managers_used; ++i) {
    if (candidate == &managers[i]) {
      return managers[i].state == 1 ? &managers[i] : NULL;
    }
  }
  return NULL;
}

/* Checks a manager the server passed in; counts it as bad when it is not a live one. */
static inline struct manager* check_manager(void* candidate) {
  pthread_mutex_lock(&counting_lock);
  struct manager* found = known_manager(candidate);
  if (found == NULL) {
    counts[BAD_MANAGERS]++;
  }
  pthread_mutex_unlock(&counting_lock);
  return found;
}

/* malloc, registered as handed out for `manager`. */
static inline void* counted_malloc(size_t size, void* manager) {
  void* ptr = malloc(size ? size : 1);
  pthread_mutex_lock(&counting_lock);
  if (live_count == MAX_LIVE) {
    abort(); /* a leak this large fails the test run loudly */
  }
  struct manager* owner = known_manager(manager);
  if (owner == NULL) {
    counts[BAD_MANAGERS]++;
  } else {
    owner->live++;
  }
  live[live_count].ptr = ptr;
  live[live_count].owner = owner;
  live_count++;
  counts[ALLOCATED]++;
  pthread_mutex_unlock(&counting_lock);
  return ptr;
}

DLL_PUBLIC void counters(uint64_t* out) {
  pthread_mutex_lock(&counting_lock);
  memcpy(out, counts, sizeof(counts));
  pthread_mutex_unlock(&counting_lock);
}

DLL_PUBLIC int release(void* ptr, void* manager) {
  pthread_mutex_lock(&counting_lock);
  struct manager* owner = known_manager(manager);
  for (size_t i = 0; i < live_count; ++i) {
    if (live[i].ptr == ptr) {
      if (owner == NULL || live[i].owner != owner) {
        counts[BAD_MANAGERS]++;
      }
      if (live[i].owner != NULL) {
        live[i].owner->live--;
      }
      live[i] = live[--live_count];
      counts[RELEASED]++;
      pthread_mutex_unlock(&counting_lock);
      free(ptr);
      return 0;
    }
  }
  counts[BAD_RELEASES]++;
  pthread_mutex_unlock(&counting_lock);
  return 1;
}

/* An outputs array of `count` entries. */
static inline struct CustomNodeTensor* counted_outputs(int count, void* manager) {
  return (struct CustomNodeTensor*)counted_malloc(sizeof(struct CustomNodeTensor) * (size_t)count,
                                                  manager);
}

/* A valid output: dims (d0, d1), data sized for them and zero-filled. */
static inline void fill_output(struct CustomNodeTensor* output, const char* name,
                               CustomNodeTensorPrecision precision, size_t itemsize, uint64_t d0,
                               uint64_t d1, void* manager) {
  output->name = name;
  output->dimsCount = 2;
  output->dims = (uint64_t*)counted_malloc(2 * sizeof(uint64_t), manager);
  output->dims[0] = d0;
  output->dims[1] = d1;
  output->dataBytes = d0 * d1 * itemsize;
  output->data = (uint8_t*)counted_malloc(output->dataBytes, manager);
  memset(output->data, 0, output->dataBytes);
  output->precision = precision;
}

static inline const char* find_param(const struct CustomNodeParam* params, int count,
                                     const char* key) {
  for (int i = 0; i < count; ++i) {
    if (strcmp(params[i].key, key) == 0) {
      return params[i].value;
    }
  }
  return NULL;
}

static inline int int_param(const struct CustomNodeParam* params, int count, const char* key,
                            int fallback) {
  const char* value = find_param(params, count, key);
  return value ? atoi(value) : fallback;
}

#ifndef NODE_OWN_INITIALIZE
DLL_PUBLIC int initialize(void** manager, const struct CustomNodeParam* params, int paramsCount) {
  (void)params;
  (void)paramsCount;
  pthread_mutex_lock(&counting_lock);
  if (*manager != NULL) {
    counts[BAD_MANAGERS]++; /* the ABI promises a NULL-initialised pointer */
  }
  if (managers_used == MAX_MANAGERS) {
    pthread_mutex_unlock(&counting_lock);
    return 99;
  }
  managers[managers_used].state = 1;
  *manager = &managers[managers_used++];
  counts[INITIALIZED]++;
  pthread_mutex_unlock(&counting_lock);
  return 0;
}

DLL_PUBLIC int deinitialize(void* manager) {
  pthread_mutex_lock(&counting_lock);
  struct manager* found = known_manager(manager);
  if (found == NULL) {
    counts[BAD_MANAGERS]++;
  } else {
    counts[LIVE_AT_DEINIT] += found->live;
    found->state = 2;
  }
  counts[DEINITIALIZED]++;
  pthread_mutex_unlock(&counting_lock);
  return 0;
}
#endif

#ifndef NODE_OWN_METADATA
static inline void set_info(struct CustomNodeTensorInfo* entry, const char* name,
                            CustomNodeTensorPrecision precision, uint64_t d0, uint64_t d1,
                            void* manager) {
  entry->name = name;
  entry->dimsCount = 2;
  entry->dims = (uint64_t*)counted_malloc(2 * sizeof(uint64_t), manager);
  entry->dims[0] = d0;
  entry->dims[1] = d1;
  entry->precision = precision;
}

DLL_PUBLIC int getInputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                             const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)params;
  (void)paramsCount;
  *infoCount = 1;
  *info = (struct CustomNodeTensorInfo*)counted_malloc(sizeof(**info), manager);
  set_info(&(*info)[0], "input_numbers", FP32, 1, 0 /* any size */, manager);
  return 0;
}

DLL_PUBLIC int getOutputsInfo(struct CustomNodeTensorInfo** info, int* infoCount,
                              const struct CustomNodeParam* params, int paramsCount,
                              void* manager) {
  (void)params;
  (void)paramsCount;
  *infoCount = 2;
  *info = (struct CustomNodeTensorInfo*)counted_malloc(2 * sizeof(**info), manager);
  set_info(&(*info)[0], "output_numbers", FP32, 1, 0 /* any size */, manager);
  /* Unnamed entries are skipped (COMPAT.md §1.3), but their dims must still come back. */
  set_info(&(*info)[1], NULL, U8, 3, 3, manager);
  return 0;
}
#endif

#endif /* OVMSX_TEST_COUNTING_H */
