tune run --nproc_per_node 2 full_finetune_distributed --config llama3/8B_full
