python main.py fit --model.learning_rate 0.01 --trainer.fast_dev_run True
