torchrun --nproc_per_node=8 --master_port=41234 finetune.py
