python3 train.py --nosave --batch-size 16 --accumulate 1 --data data/coco_16img.data
