yolo task=detect mode=train imgsz=640 data=data.yaml epochs=100 batch=8 name=okay
