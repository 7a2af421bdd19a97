python -m torch.distributed.launch --nproc_per_node=8 --use_env train.py\
    --model mobilenet_v2 --epochs 300 --lr 0.045 --wd 0.00004\
    --lr-step-size 1 --lr-gamma 0.98
