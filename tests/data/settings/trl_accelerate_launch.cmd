ACCELERATE_LOG_LEVEL=info accelerate launch \
    --main_process_port 0 \
    --config_file config/accelerate_config.yaml \
    --num_processes=$NUM_GPUS \
    sft.py \
    --model_name $MODEL_NAME \
    --dataset_name $DATASET_NAME \
    --split $SPLIT \
    --prompt_field $PROMPT_FIELD \
    --response_field $RESPONSE_FIELD \
    --shuffle \
    --output_dir $OUTPUT_DIR \
    --max_length $MAX_LENGTH \
    --learning_rate $LEARNING_RATE \
    --num_epochs $NUM_EPOCHS \
    --save_strategy $SAVE_STRATEGY \
    --eff_batch_size $EFF_BATCH_SIZE \
    --per_device_batch_size $PER_DEVICE_BATCH_SIZE \
    --optim $OPTIM
