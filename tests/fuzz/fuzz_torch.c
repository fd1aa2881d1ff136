/*
 * fuzz_torch.c — libFuzzer harness for torch.save archives (zip directory,
 * inflate, CRC, the pickle machine): any bytes go to torch_parse(); every
 * accepted tensor's data is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "torch.h"
#include "st_touch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_file f;
    gguf_error err;
    if (torch_parse(data, size, &f, &err) == 0)
        st_touch_and_close(&f);
    return 0;
}
