#define INFER_IMPLEMENTATION
#include "infer.h"
int main(int argc,char**argv){(void)argc;(void)argv;return 0;}
