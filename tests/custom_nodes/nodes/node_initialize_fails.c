/* initialize returns 7 (after setting the manager): the node must not load, and
   deinitialize must never be called for it. */
#define NODE_OWN_INITIALIZE
#include "counting.h"

static int dummy_manager;

DLL_PUBLIC int initialize(void** manager, const struct CustomNodeParam* params, int paramsCount) {
  (void)params;
  (void)paramsCount;
  *manager = &dummy_manager;
  return 7;
}

DLL_PUBLIC int deinitialize(void* manager) {
  (void)manager;
  pthread_mutex_lock(&counting_lock);
  counts[DEINITIALIZED]++;
  pthread_mutex_unlock(&counting_lock);
  return 0;
}

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  (void)outputs;
  (void)outputsCount;
  (void)params;
  (void)paramsCount;
  (void)manager;
  return 1;
}
