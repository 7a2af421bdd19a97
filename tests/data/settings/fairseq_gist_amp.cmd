fairseq-train \
--valid-subset valid --train-subset train \
--lr 0.01 --clip-norm 0.1 --dropout 0.0 --max-tokens 8192 --arch transformer \
--max-source-positions 4096 --max-target-positions 2048 \
--encoder-embed-dim 1024 --decoder-embed-dim 1024 \
--encoder-attention-heads 16 --decoder-attention-heads 16 \
--amp --model-parallel-size 2 --lr-scheduler cosine \
--validate-interval-updates 25000 --max-update 1000000 \
--save-dir checkpoints --optimizer adam \
--tensorboard-logdir tlogz ghdis_dbg
