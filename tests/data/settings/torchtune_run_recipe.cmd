tune run lora_finetune_single_device --config llama2/7B_lora checkpointer.checkpoint_dir=./model tokenizer.path=./tokenizer.model
