#define NCCL_MAJOR 2
#define NCCL_MINOR 18
#define NCCL_PATCH 3
