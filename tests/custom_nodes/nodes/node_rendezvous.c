/*
 * execute waits until `parties` (param, default 4) calls are inside it at the same time, and
 * fails (returns 1) if that does not happen within 5 seconds: it can only succeed when the
 * server calls it from several threads without holding a lock (such as the GIL) across it.
 * Output `done` INT32 [1, 1].
 */
#include <errno.h>
#include <time.h>

#include "counting.h"

static pthread_mutex_t barrier_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t barrier_cond = PTHREAD_COND_INITIALIZER;
static int waiting;
static uint64_t generation;

static int meet(int parties) {
  pthread_mutex_lock(&barrier_lock);
  const uint64_t mine = generation;
  if (++waiting == parties) {
    waiting = 0;
    generation++;
    pthread_cond_broadcast(&barrier_cond);
    pthread_mutex_unlock(&barrier_lock);
    return 0;
  }
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 5;
  while (generation == mine) {
    if (pthread_cond_timedwait(&barrier_cond, &barrier_lock, &deadline) == ETIMEDOUT &&
        generation == mine) {
      waiting--;
      pthread_mutex_unlock(&barrier_lock);
      return 1;
    }
  }
  pthread_mutex_unlock(&barrier_lock);
  return 0;
}

/* How many calls wait in meet() now. */
DLL_PUBLIC int waiting_calls(void) {
  pthread_mutex_lock(&barrier_lock);
  const int count = waiting;
  pthread_mutex_unlock(&barrier_lock);
  return count;
}

/* Joins the meeting from outside execute (a test thread standing in for a call). */
DLL_PUBLIC int arrive(int parties) { return meet(parties); }

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  if (meet(int_param(params, paramsCount, "parties", 4)) != 0) {
    return 1;
  }
  *outputsCount = 1;
  *outputs = counted_outputs(1, manager);
  fill_output(&(*outputs)[0], "done", I32, sizeof(int32_t), 1, 1, manager);
  return 0;
}
