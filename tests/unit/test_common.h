/* test_common.h — includes every core test needs. */
#ifndef TEST_COMMON_H
#define TEST_COMMON_H
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "heap_fixture.h"
#endif
