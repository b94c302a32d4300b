/* execute returns 5 after pointing *outputs at memory it owns (as a library that failed half
   way might): the server must release nothing, so any release shows up as BAD_RELEASES. */
#include "counting.h"

static struct CustomNodeTensor not_for_release[1];

DLL_PUBLIC int execute(const struct CustomNodeTensor* inputs, int inputsCount,
                       struct CustomNodeTensor** outputs, int* outputsCount,
                       const struct CustomNodeParam* params, int paramsCount, void* manager) {
  (void)inputs;
  (void)inputsCount;
  (void)params;
  (void)paramsCount;
  (void)manager;
  not_for_release[0].name = "output_numbers";
  *outputs = not_for_release;
  *outputsCount = 1;
  return 5;
}
